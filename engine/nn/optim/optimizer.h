// Optimizer: updates a parameter store's f32 master weights from its f32 gradients, one fused
// update per contiguous group range, with whatever state it keeps per parameter.
#pragma once

#include <cstddef>
#include <memory>

#include "engine/backend/backend.h"
#include "engine/nn/parameter_store.h"

namespace dlbench::nn {

struct OptimizerConfig {
  enum class Kind { kSgdMomentum };
  Kind kind = Kind::kSgdMomentum;
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;  // on ParamGroup::kDecayed only
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual const char* name() const = 0;
  // Bytes of per-parameter state (momentum, moments) on the device.
  virtual std::size_t state_bytes() const = 0;
  // grad_scale multiplies every gradient first: 1 / (loss scale x replicas) undoes loss
  // scaling and averages the replicas' summed gradients, for free.
  virtual void update(ParameterStore& store, float grad_scale) = 0;
};

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, backend::Backend& backend,
                                          const ParameterStore& store);

}  // namespace dlbench::nn
