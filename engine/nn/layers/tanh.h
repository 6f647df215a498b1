// Tanh: BERT's pooler activation (on the [CLS] row, before the next-sentence classifier).
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = tanh(x); backward reads y: dx = dy (1 - y^2).
class Tanh final : public Layer {
 public:
  const char* kind() const override { return "tanh"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  SavedForBackward saved_for_backward() const override { return {{}, {0}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

}  // namespace dlbench::nn
