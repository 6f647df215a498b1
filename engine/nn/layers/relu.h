// Relu: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = max(x, 0); backward needs only y.
class Relu final : public Layer {
 public:
  const char* kind() const override { return "relu"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  SavedForBackward saved_for_backward() const override { return {{}, {0}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
