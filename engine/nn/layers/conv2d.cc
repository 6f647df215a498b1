#include "engine/nn/layers/conv2d.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Conv2d: y = conv(x, W) + b; dx = conv_transpose(dy, W); dW = x ⋆ dy; db = Σ dy -------
Shape Conv2d::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], p_.input_shape(), "conv2d");
  return p_.output_shape();
}

std::vector<ParamDecl> Conv2d::params() const {
  std::vector<ParamDecl> decls{{"weight", p_.weight_shape(), Init::kKaimingNormal,
                                p_.r * p_.s * p_.c, ParamGroup::kDecayed}};
  if (p_.bias) decls.push_back({"bias", {p_.k}, Init::kZeros, 1, ParamGroup::kNotDecayed});
  return decls;
}

void Conv2d::forward(const StepContext& ctx) {
  Tensor bias = p_.bias ? ctx.params[1] : Tensor();
  ctx.backend.conv2d_forward(p_, ctx.inputs[0], ctx.params[0], bias, ctx.output());
}

std::optional<ReluEpilogue> Conv2d::relu_epilogue() const {
  return with_relu_epilogue(backend::OpKind::kConv2dForward, p_);
}

void Conv2d::backward(const StepContext& ctx) {
  const backend::Conv2dParams p = without_relu_epilogue(ctx, p_);
  Tensor dbias = p.bias ? ctx.param_grads[1] : Tensor();
  ctx.backend.conv2d_backward_weights(p, ctx.inputs[0], ctx.output_grad(), ctx.param_grads[0],
                                      dbias, one_param_grad_mode(ctx));
  if (ctx.input_grads[0].defined())
    ctx.backend.conv2d_backward_data(p, ctx.output_grad(), ctx.params[0], ctx.input_grads[0],
                                     ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
