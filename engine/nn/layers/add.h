// Add: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = a + b (residual connections); the gradient flows unchanged to both inputs.
class Add final : public Layer {
 public:
  const char* kind() const override { return "add"; }
  int num_inputs() const override { return 2; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
