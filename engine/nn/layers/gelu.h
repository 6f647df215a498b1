// Gelu: BERT's feed-forward activation in the tanh form of Google's BERT, which cuBLASLt's GELU
// epilogues compute too (the fuse_feed_forward pass uses them):
//   GELU(x) = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, within 5e-4 of the exact x Phi(x).
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Backward reads x (GELU is not monotonic, so y does not tell x apart).
class Gelu final : public Layer {
 public:
  const char* kind() const override { return "gelu"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
