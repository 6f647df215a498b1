#include "engine/nn/layers/linear.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Linear: y = x Wᵀ + b; dx = dy W; dW = dyᵀ x; db = Σ_rows dy ---------------------------
Shape Linear::output_shape(std::span<const Shape> inputs) const {
  if (inputs[0][0] != p_.m || inputs[0].numel() != p_.m * p_.k)
    throw Error(ErrorKind::kInternal, "linear: input " + inputs[0].str() + " is not [" +
                                          std::to_string(p_.m) + ", " + std::to_string(p_.k) + "]");
  return {p_.m, p_.n};
}

std::vector<ParamDecl> Linear::params() const {
  std::vector<ParamDecl> decls{
      {"weight", {p_.n, p_.k}, Init::kKaimingNormal, p_.k, ParamGroup::kDecayed}};
  if (init_stddev_ > 0) {
    decls[0].init = Init::kNormal;
    decls[0].stddev = init_stddev_;
  }
  if (p_.bias) decls.push_back({"bias", {p_.n}, Init::kZeros, 1, ParamGroup::kNotDecayed});
  return decls;
}

void Linear::forward(const StepContext& ctx) {
  Tensor bias = p_.bias ? ctx.params[1] : Tensor();
  ctx.backend.matmul_forward(p_, flat(ctx.inputs[0], p_.m), ctx.params[0], bias, ctx.output());
}

std::optional<ReluEpilogue> Linear::relu_epilogue() const {
  return with_relu_epilogue(backend::OpKind::kMatmulForward, p_);
}

void Linear::backward(const StepContext& ctx) {
  const GradMode mode = one_param_grad_mode(ctx);
  const Tensor dbias = p_.bias ? ctx.param_grads[1] : Tensor();
  const backend::MatmulParams p = backward_through_epilogue(ctx, p_, dbias, mode);
  ctx.backend.matmul_backward_weights(p, flat(ctx.inputs[0], p.m), ctx.output_grad(),
                                      ctx.param_grads[0], p.bias ? dbias : Tensor(), mode);
  if (ctx.input_grads[0].defined())
    ctx.backend.matmul_backward_data(p, ctx.output_grad(), ctx.params[0],
                                     flat(ctx.input_grads[0], p.m), ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
