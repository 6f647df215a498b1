// BatchNorm: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// Batch norm over channels (last dimension). Training uses batch statistics and updates the
// running ones; inference uses the running ones.
// The fusion passes give it a tail: fuse_relu() (fuse_bn_relu) makes it y = relu(bn(x)), and
// fuse_residual_relu() (fuse_bn_add_relu) y = relu(bn(x) + r) with r a second input, a residual
// block's tail. Training then keeps the ReLU's mask as bits (state), which backward reads.
// fuse_normalized_residual_relu() (fuse_dual_bn_add_relu, training) makes it
// y = relu(bn(x) + bn'(r)), taking in the residual's own batch norm bn' (its parameters after
// this one's, its state after this one's): ResNet's downsampling tails.
// take_statistics() (fuse_conv_bn_stats, training only) gives it a last input: the sums of x and
// x^2 per channel from the convolution that wrote x, so forward reads x once (with a normalized
// residual, two: x's, then r's).
class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(const backend::BatchNormParams& p) : p_(p) {}
  const backend::BatchNormParams& batch_norm_params() const { return p_; }
  // batch_norm_backward overwrites dgamma and dbeta: its parameters cannot be shared.
  bool accumulates_param_grads() const override { return false; }
  const char* kind() const override;
  int num_inputs() const override {
    return 1 + (p_.residual ? 1 : 0) + (p_.statistics ? (p_.residual_norm ? 2 : 1) : 0);
  }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override {
    if (p_.residual_norm) return {{0, 1}, {}};
    return {{0}, {}};
  }
  std::optional<ReluEpilogue> relu_epilogue() const override;
  void fuse_relu(Mode mode) override;
  // Whether the residual tail could be fused, asked as relu_epilogue() is; and fusing it.
  std::optional<ReluEpilogue> residual_relu_epilogue() const;
  void fuse_residual_relu(Mode mode);
  // The same with the residual normalized by `other`, a plain batch norm over the same rows and
  // channels; and fusing it (the pass moves other's parameters here).
  std::optional<ReluEpilogue> normalized_residual_relu_epilogue(const BatchNorm& other) const;
  void fuse_normalized_residual_relu(Mode mode);
  // The op forward training runs with statistics handed over, as supports() is asked about it;
  // and taking them.
  backend::BatchNormParams statistics_forward() const;
  void take_statistics() { p_.statistics = true; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  // Where the residual batch norm's four rows of state start: after the mask, where kept.
  int residual_state() const { return 4 + (keeps_mask_ ? 1 : 0); }
  backend::ResidualNorm residual_norm(const StepContext& ctx) const;

  backend::BatchNormParams p_;
  bool keeps_mask_ = false;  // training with a ReLU tail: the mask comes after the four f32 rows
};

}  // namespace dlbench::nn
