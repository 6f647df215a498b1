// Optimizer: updates a parameter store's f32 master weights from its f32 gradients, one fused
// update per contiguous group range, with whatever state it keeps per parameter.
//
// The dense groups (decayed, not decayed, kept in f32) go to one optimizer: SGD with momentum,
// Adam or AdamW. The sparse-rows tables (embeddings) go either to the same optimizer, as dense
// parameters, or to lazy Adam over the rows each step touched; then a CompositeOptimizer runs
// the two (composite.h). Weight decay applies to ParamGroup::kDecayed only, for every kind.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/nn/parameter_store.h"

namespace dlbench::nn {

struct OptimizerConfig {
  enum class Kind {
    kSgdMomentum,  // torch.optim.SGD with momentum (coupled weight decay)
    kAdam,         // torch.optim.Adam (coupled weight decay: an L2 term in the gradient)
    kAdamW,        // torch.optim.AdamW (decoupled weight decay)
    kSparseAdam,   // lazy Adam over a table's touched rows: for sparse_kind only
  };
  // The dense groups' optimizer: kSgdMomentum, kAdam or kAdamW.
  Kind kind = Kind::kSgdMomentum;
  // The ParamGroup::kSparseRows tables': kSparseAdam, or `kind` to update them as dense
  // parameters (not decayed) with the dense optimizer.
  Kind sparse_kind = Kind::kSparseAdam;
  float learning_rate = 0.01f;
  float momentum = 0.9f;                                // SGD
  float weight_decay = 0.0f;                            // on ParamGroup::kDecayed only
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // the Adams (PyTorch's defaults)
  // Clipping by the global norm of every gradient (PyTorch's clip_grad_norm_; GNMT's 5), the
  // Adams only; 0: none.
  float max_grad_norm = 0.0f;
};
const char* to_string(OptimizerConfig::Kind kind);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;  // "sgd-momentum", "adamw+sparse-adam"
  // Bytes of per-parameter state (momentum, moments, step counters) on the device.
  virtual std::size_t state_bytes() const = 0;
  // grad_scale multiplies every gradient first: 1 / (loss scale x replicas) undoes loss
  // scaling and averages the replicas' summed gradients, for free.
  virtual void update(ParameterStore& store, float grad_scale) = 0;
};

// Whether a dense optimizer updates the kSparseRows tables too, as dense parameters, or skips
// them because another optimizer (lazy Adam) owns them.
enum class Tables { kUpdate, kSkip };

// A contiguous run of the flat buffers that a dense optimizer updates in one fused call, and
// whether it is the decayed group (weight decay applies).
struct DenseRange {
  ParamRange range;
  bool decayed = false;
};
// The decayed group, then the other groups merged where they touch (the kSparseRows group with
// Tables::kUpdate only). Empty groups are left out.
std::vector<DenseRange> dense_ranges(const ParameterStore& store, Tables tables);

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, backend::Backend& backend,
                                          const ParameterStore& store);

}  // namespace dlbench::nn
