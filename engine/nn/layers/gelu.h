// Gelu: the feed-forward activation of BERT and the Transformer, in its exact (erf) form.
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = x Phi(x); backward reads x (GELU is not monotonic, so y does not tell x apart).
class Gelu final : public Layer {
 public:
  const char* kind() const override { return "gelu"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
