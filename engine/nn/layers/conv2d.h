// Conv2d: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = conv(x, W) (+ b). Weights KRSC, activations NHWC.
// fuse_relu() (the fuse_conv_relu pass) makes it y = relu(conv(x, W) + b) in one op; its backward
// then applies the ReLU's backward to the output gradient in place first.
class Conv2d final : public Layer {
 public:
  explicit Conv2d(const backend::Conv2dParams& p) : p_(p) {}
  const char* kind() const override { return fused_relu() ? "conv2d+relu" : "conv2d"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  SavedForBackward saved_for_backward() const override {
    return fused_relu() ? SavedForBackward{{0}, {0}} : SavedForBackward{{0}, {}};
  }
  std::optional<ReluEpilogue> relu_epilogue() const override;
  void fuse_relu(Mode) override { p_.activation = backend::Activation::kRelu; }
  bool fused_relu() const { return p_.activation == backend::Activation::kRelu; }
  std::int64_t forward_macs() const override { return p_.macs(); }
  std::int64_t backward_macs(bool skip_input_grad) const override {
    return p_.macs() * (skip_input_grad ? 1 : 2);
  }
  void set_math(backend::MathMode math) override { p_.math = math; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::Conv2dParams p_;
};

}  // namespace dlbench::nn
