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
// take_statistics() (fuse_conv_bn_stats, training only) gives it a last input: the sums of x and
// x^2 per channel from the convolution that wrote x, so forward reads x once.
class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(const backend::BatchNormParams& p) : p_(p) {}
  const backend::BatchNormParams& batch_norm_params() const { return p_; }
  // batch_norm_backward overwrites dgamma and dbeta: its parameters cannot be shared.
  bool accumulates_param_grads() const override { return false; }
  const char* kind() const override;
  int num_inputs() const override { return 1 + (p_.residual ? 1 : 0) + (p_.statistics ? 1 : 0); }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  std::optional<ReluEpilogue> relu_epilogue() const override;
  void fuse_relu(Mode mode) override;
  // Whether the residual tail could be fused, asked as relu_epilogue() is; and fusing it.
  std::optional<ReluEpilogue> residual_relu_epilogue() const;
  void fuse_residual_relu(Mode mode);
  // The op forward training runs with statistics handed over, as supports() is asked about it;
  // and taking them.
  backend::BatchNormParams statistics_forward() const;
  void take_statistics() { p_.statistics = true; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::BatchNormParams p_;
  bool keeps_mask_ = false;  // training with a ReLU tail: the mask is the last state
};

}  // namespace dlbench::nn
