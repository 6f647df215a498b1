// Adam and AdamW as PyTorch's torch.optim.Adam / AdamW (Backend::adam_update): one fused update
// per dense range, weight decay on the decayed range only (coupled for Adam, decoupled for AdamW).
// Each range keeps its own i32 step counter on the device, which the update itself advances, so
// a recorded device graph replays the right bias corrections step after step.
#pragma once

#include <vector>

#include "engine/core/memory.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {

class Adam final : public Optimizer {
 public:
  // config.kind kAdam or kAdamW; with config.max_grad_norm, `sum_squares` is where ClipByNorm
  // leaves the gradients' sum of squares (f32 [1] on the device).
  Adam(const OptimizerConfig& config, backend::Backend& backend, const ParameterStore& store,
       Tables tables = Tables::kUpdate, Tensor sum_squares = {});
  std::string name() const override { return decoupled_ ? "adamw" : "adam"; }
  std::size_t state_bytes() const override { return moments_.bytes() + steps_.bytes(); }
  void update(ParameterStore& store, float grad_scale) override;

 private:
  struct Range {
    DenseRange dense;
    std::int64_t state_offset = 0;  // of its m (and v) in moments_
  };
  OptimizerConfig config_;
  bool decoupled_;
  backend::Backend& backend_;
  Tensor sum_squares_;
  std::vector<Range> ranges_;
  std::int64_t state_count_ = 0;
  Buffer moments_;  // f32: every range's m, then every range's v
  Buffer steps_;    // i32, one counter per range
};

// The update's parameters for one range of a config of kind kAdam or kAdamW.
backend::AdamParams adam_params(const OptimizerConfig& config, bool decoupled, bool decayed,
                                float grad_scale);

}  // namespace dlbench::nn
