// ConcatColumns: one of the plain layers models are built from (forward and backward side by
// side).
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = [x_0 | x_1 | ...]: inputs [rows, w_k] side by side in the columns of y [rows, Σ w_k]
// (NCF's two embeddings into its MLP, and its two branches into the last layer). Inputs of
// higher rank are joined along their last axis, the leading axes alike: NHWC activations
// [n, h, w, c_k] are [n*h*w, c_k] matrices, so this is also U-Net's concatenation along the
// channels. Backward hands each input its own columns of dy: SplitColumns the other way round.
// Nothing is kept.
class ConcatColumns final : public Layer {
 public:
  explicit ConcatColumns(int inputs) : inputs_(inputs) {}
  const char* kind() const override { return "concat_columns"; }
  int num_inputs() const override { return inputs_; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  int inputs_;
};

}  // namespace dlbench::nn
