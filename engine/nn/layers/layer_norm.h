// LayerNorm: normalization over the last dimension of each position (BERT's and the
// Transformer's), with a learned scale and shift per column, the same in training and inference.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y[..., c] = gamma[c] (x[..., c] - mu) / sqrt(var + eps) + beta[c], mu and var over the last
// dimension of each row; the rows' statistics are kept for backward.
class LayerNorm final : public Layer {
 public:
  // `shape`: the input, [rows..., width]; eps 1e-12 as BERT's.
  explicit LayerNorm(const Shape& shape, float epsilon = 1e-12f);
  const char* kind() const override { return "layer_norm"; }
  bool accumulates_param_grads() const override { return false; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  Shape shape_;
  backend::LayerNormParams p_;
};

}  // namespace dlbench::nn
