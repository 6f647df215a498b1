// Dropout: BERT's and the Transformer's regularizer, after the embeddings, the attention
// probabilities' output projection and the feed-forward block.
#pragma once

#include <cstdint>

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// In training, y = x / (1 - p) where kept, else 0 (Backend::dropout_forward): the mask is drawn
// on the device from (seed, a step counter of the layer's own, the element) and redrawn in
// backward, never stored. Outside training it passes x on unchanged (a copy: a model builds
// its inference graph without dropout layers, as PyTorch's eval() turns them off, so this is for
// graphs shared between modes). Each layer of a model needs a seed of its own.
class Dropout final : public Layer {
 public:
  Dropout(float probability, std::uint64_t seed);
  const char* kind() const override { return "dropout"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  // The counter: i32 [1], advanced by every training forward.
  std::vector<StateDecl> state(backend::Backend&) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::DropoutParams p_;
};

}  // namespace dlbench::nn
