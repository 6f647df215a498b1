// The plain layers models are built from. Backends may later fuse patterns of them
// (conv + BN statistics, BN + add + ReLU); these stay the reference.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = conv(x, W) (+ b). Weights KRSC, activations NHWC.
class Conv2d final : public Layer {
 public:
  explicit Conv2d(const backend::Conv2dParams& p) : p_(p) {}
  const char* kind() const override { return "conv2d"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
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

// Batch norm over channels (last dimension). Training uses batch statistics and updates the
// running ones; inference uses the running ones.
class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(const backend::BatchNormParams& p) : p_(p) {}
  // batch_norm_backward overwrites dgamma and dbeta: its parameters cannot be shared.
  bool accumulates_param_grads() const override { return false; }
  const char* kind() const override { return "batch_norm"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::BatchNormParams p_;
};

// y = max(x, 0); backward needs only y.
class Relu final : public Layer {
 public:
  const char* kind() const override { return "relu"; }
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  SavedForBackward saved_for_backward() const override { return {{}, {0}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

// Max or average pooling, including global average pooling.
class Pool final : public Layer {
 public:
  explicit Pool(const backend::PoolParams& p) : p_(p) {}
  const char* kind() const override {
    return p_.kind == backend::PoolKind::kMax ? "max_pool" : "avg_pool";
  }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<StateDecl> state(backend::Backend& be) const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {0}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::PoolParams p_;
};

// y = a + b (residual connections); the gradient flows unchanged to both inputs.
class Add final : public Layer {
 public:
  const char* kind() const override { return "add"; }
  int num_inputs() const override { return 2; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;
};

// y = x · Wᵀ + b over x flattened to [rows, features] (NHWC order). Weights start normal with
// init_stddev, or Kaiming-normal when it is 0 (models pick what their reference uses).
// fuse_relu() (the FuseMatmulRelu pass) makes it y = relu(x · Wᵀ + b) in one op; its backward
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
  void fuse_relu() { p_.activation = backend::Activation::kRelu; }
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
