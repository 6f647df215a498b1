#include "engine/nn/layers/convolution.h"

#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Convolution: y = conv(x, W) + b; dx = conv_transpose(dy, W); dW = x ⋆ dy; db = Σ dy -------
// With a batch norm folded in, the state holds its running mean and variance, then the folded
// weight and bias in the weights' dtype.
enum FoldedState { kRunningMean, kRunningVar, kFoldedWeight, kFoldedBias };

const char* Convolution::kind() const {
  if (p_.volumetric()) return fused_relu() ? "conv3d+relu" : "conv3d";  // no 3D fold or stats
  if (p_.residual) return "conv2d+batch_norm+add+relu";
  if (folded_) return fused_relu() ? "conv2d+batch_norm+relu" : "conv2d+batch_norm";
  if (p_.statistics) return "conv2d+statistics";
  return fused_relu() ? "conv2d+relu" : "conv2d";
}

Shape Convolution::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], p_.input_shape(), kind());
  if (p_.residual) expect_shape(inputs[1], p_.output_shape(), "the convolution's residual");
  return p_.output_shape();
}

std::vector<OutputInfo> Convolution::outputs(std::span<const ValueInfo> inputs) const {
  std::vector<OutputInfo> outs = Layer::outputs(inputs);
  if (p_.statistics) outs.push_back({p_.statistics_shape(), DType::kF32, false});
  return outs;
}

std::vector<ParamDecl> Convolution::params() const {
  std::vector<ParamDecl> decls{
      {"weight", p_.weight_shape(), Init::kKaimingNormal, p_.taps() * p_.c, ParamGroup::kDecayed}};
  if (p_.bias) decls.push_back({"bias", {p_.k}, Init::kZeros, 1, ParamGroup::kNotDecayed});
  if (folded_)
    for (const ParamDecl& d : BatchNorm(*folded_).params()) decls.push_back(d);
  return decls;
}

std::vector<StateDecl> Convolution::state(backend::Backend&) const {
  if (!folded_) return {};
  const std::size_t channel_bytes = static_cast<std::size_t>(p_.k) * sizeof(float);
  return {{"running_mean", channel_bytes, Init::kZeros, true},
          {"running_var", channel_bytes, Init::kOnes, true},
          {"folded_weight", checked_bytes(p_.weight_shape(), folded_dtype_), Init::kZeros},
          {"folded_bias", checked_bytes({p_.k}, folded_dtype_), Init::kZeros}};
}

std::optional<backend::ConvParams> Convolution::folded_forward(
    const backend::BatchNormParams& bn) const {
  if (folded_ || fused_relu() || bn.channels != p_.k || p_.volumetric()) return std::nullopt;
  backend::ConvParams p = p_;
  p.bias = true;  // the folded batch norm's shift
  p.residual = bn.residual;
  p.activation = bn.activation;
  return p;
}

std::optional<backend::ConvParams> Convolution::statistics_forward() const {
  if (folded_ || p_.statistics || p_.residual || fused_relu() || p_.volumetric())
    return std::nullopt;
  backend::ConvParams p = p_;
  p.statistics = true;
  return p;
}

void Convolution::fold_batch_norm(const backend::BatchNormParams& bn, DType dtype) {
  const std::optional<backend::ConvParams> folded = folded_forward(bn);
  DLBENCH_CHECK(folded.has_value(), "convolution: this batch norm does not fold into it");
  p_.residual = folded->residual;
  p_.activation = folded->activation;
  folded_ = bn.without_tail();  // the tail is the convolution's epilogue now
  folded_dtype_ = dtype;
}

void Convolution::prepare(const StepContext& ctx) {
  if (!folded_) return;
  DLBENCH_CHECK(ctx.mode == Mode::kInfer, "a batch norm folded for inference does not train");
  const std::size_t gamma = p_.bias ? 2 : 1;
  ctx.backend.batch_norm_fold(
      *folded_, ctx.params[0], p_.bias ? ctx.params[1] : Tensor(), ctx.params[gamma],
      ctx.params[gamma + 1], ctx.state[kRunningMean].reshaped({p_.k}),
      ctx.state[kRunningVar].reshaped({p_.k}), folded_weight(ctx), folded_bias(ctx));
}

void Convolution::forward(const StepContext& ctx) {
  if (folded_)
    ctx.backend.conv_forward(forward_params(), ctx.inputs[0], folded_weight(ctx), folded_bias(ctx),
                             ctx.output(), p_.residual ? ctx.inputs[1] : Tensor());
  else
    ctx.backend.conv_forward(p_, ctx.inputs[0], ctx.params[0], p_.bias ? ctx.params[1] : Tensor(),
                             ctx.output(), Tensor(), p_.statistics ? ctx.outputs[1] : Tensor());
}

backend::ConvParams Convolution::forward_params() const {
  backend::ConvParams p = p_;
  p.bias = p_.bias || folded_.has_value();
  return p;
}

Tensor Convolution::folded_weight(const StepContext& ctx) const {
  return state_as(ctx.state[kFoldedWeight], p_.weight_shape(), folded_dtype_);
}

Tensor Convolution::folded_bias(const StepContext& ctx) const {
  return state_as(ctx.state[kFoldedBias], {p_.k}, folded_dtype_);
}

std::optional<ReluEpilogue> Convolution::relu_epilogue() const {
  return with_relu_epilogue(backend::OpKind::kConvForward, forward_params());
}

void Convolution::backward(const StepContext& ctx) {
  DLBENCH_CHECK(!folded_, "a batch norm folded for inference does not train");
  const GradMode mode = one_param_grad_mode(ctx);
  const Tensor dbias = p_.bias ? ctx.param_grads[1] : Tensor();
  backend::ConvParams p = backward_through_epilogue(ctx, p_, dbias, mode);
  p.statistics = false;  // a forward output only
  ctx.backend.conv_backward_weights(p, ctx.inputs[0], ctx.output_grad(), ctx.param_grads[0],
                                    p.bias ? dbias : Tensor(), mode);
  if (ctx.input_grads[0].defined())
    ctx.backend.conv_backward_data(p, ctx.output_grad(), ctx.params[0], ctx.input_grads[0],
                                   ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
