// SGD with momentum and (coupled) weight decay, as PyTorch's torch.optim.SGD: one fused
// update over the decayed range and one over the rest.
#pragma once

#include <vector>

#include "engine/core/memory.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {

class SgdMomentum final : public Optimizer {
 public:
  SgdMomentum(const OptimizerConfig& config, backend::Backend& backend, const ParameterStore& store,
              Tables tables = Tables::kUpdate);
  std::string name() const override { return "sgd-momentum"; }
  std::size_t state_bytes() const override { return velocity_.bytes(); }
  void update(ParameterStore& store, float grad_scale) override;

 private:
  OptimizerConfig config_;
  backend::Backend& backend_;
  std::vector<DenseRange> ranges_;
  Buffer velocity_;  // f32, one per parameter, in the store's order
};

}  // namespace dlbench::nn
