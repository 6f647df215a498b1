// Multiply: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = a * b elementwise (NCF's generalized matrix factorization: a user's and an item's
// embedding); da = dy * b and db = dy * a, so both inputs are kept for backward.
class Multiply final : public Layer {
 public:
  const char* kind() const override { return "multiply"; }
  int num_inputs() const override { return 2; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  SavedForBackward saved_for_backward() const override { return {{0, 1}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
