// Linear: one of the plain layers models are built from (forward and backward side by side).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = x · Wᵀ + b over x flattened to [rows, features] (NHWC order). Weights start normal with
// init_stddev, or Kaiming-normal when it is 0 (models pick what their reference uses).
// fuse_relu() (the fuse_matmul_relu pass) makes it y = relu(x · Wᵀ + b) in one op; its backward
// then applies the ReLU's backward to the output gradient in place first.
class Linear final : public Layer {
 public:
  explicit Linear(const backend::MatmulParams& p, float init_stddev = 0.0f)
      : p_(p), init_stddev_(init_stddev) {}
  const char* kind() const override { return fused_relu() ? "linear+relu" : "linear"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  SavedForBackward saved_for_backward() const override {
    return fused_relu() ? SavedForBackward{{0}, {0}} : SavedForBackward{{0}, {}};
  }
  const backend::MatmulParams& matmul() const { return p_; }
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
  backend::MatmulParams p_;
  float init_stddev_;
};

}  // namespace dlbench::nn
