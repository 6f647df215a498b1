// Convolution: one of the plain layers models are built from (forward and backward side by side),
// in 2D or 3D as its ConvParams say.
#pragma once

#include <optional>

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// y = conv(x, W) (+ b). Weights KRSC, activations NHWC (3D: KTRSC and NDHWC).
// fuse_relu() (the fuse_conv_relu pass) makes it y = relu(conv(x, W) + b) in one op; its backward
// then applies the ReLU's backward to the output gradient in place first.
// fold_batch_norm() (the fold_conv_bn pass, inference only) makes it y = bn(conv(x, W) + b),
// with the batch norm's tail if it has one (y = relu(bn(...) + r), r a second input): it takes
// the batch norm's gamma and beta as parameters after its own and its running statistics as
// state, and prepare() folds them once into a weight and bias of its own (state), which every
// forward then runs as a convolution with a bias (and the residual and ReLU in its epilogue).
// produce_statistics() (the fuse_conv_bn_stats pass, training only) gives it a second output:
// the sums of y and y^2 per channel (f32 [2, K], no gradient), which the batch norm after it
// takes instead of reading y for them.
class Convolution final : public Layer {
 public:
  explicit Convolution(const backend::ConvParams& p) : p_(p) {}
  const char* kind() const override;
  int num_inputs() const override { return p_.residual ? 2 : 1; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override {
    return fused_relu() ? SavedForBackward{{0}, {0}} : SavedForBackward{{0}, {}};
  }
  std::optional<ReluEpilogue> relu_epilogue() const override;
  void fuse_relu(Mode) override { p_.activation = backend::Activation::kRelu; }
  bool fused_relu() const { return p_.activation == backend::Activation::kRelu; }
  // What the fold_conv_bn pass asks: the op the convolution runs with `bn` (and its tail) folded
  // in (nullopt when it cannot take a batch norm: one folded already, or a ReLU before it), and
  // folding `bn` in for weights of `dtype`.
  std::optional<backend::ConvParams> folded_forward(const backend::BatchNormParams& bn) const;
  void fold_batch_norm(const backend::BatchNormParams& bn, DType dtype);
  // Whether it can hand the batch norm after it its statistics (plain: no ReLU, residual or
  // folded batch norm), as the op it would then run; and doing so.
  std::optional<backend::ConvParams> statistics_forward() const;
  void produce_statistics() { p_.statistics = true; }
  std::int64_t forward_macs() const override { return p_.macs(); }
  std::int64_t backward_macs(bool skip_input_grad) const override {
    return p_.macs() * (skip_input_grad ? 1 : 2);
  }
  void set_math(backend::MathMode math) override { p_.math = math; }
  void prepare(const StepContext& ctx) override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  // The op forward runs: with a folded batch norm, a convolution with a bias.
  backend::ConvParams forward_params() const;
  Tensor folded_weight(const StepContext& ctx) const;
  Tensor folded_bias(const StepContext& ctx) const;

  backend::ConvParams p_;
  std::optional<backend::BatchNormParams> folded_;
  DType folded_dtype_ = DType::kF32;
};

}  // namespace dlbench::nn
