// BatchNorm: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// Batch norm over channels (last dimension). Training uses batch statistics and updates the
// running ones; inference uses the running ones.
class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(const backend::BatchNormParams& p) : p_(p) {}
  // batch_norm_backward overwrites dgamma and dbeta: its parameters cannot be shared.
  bool accumulates_param_grads() const override { return false; }
  const char* kind() const override { return "batch_norm"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::BatchNormParams p_;
};

}  // namespace dlbench::nn
