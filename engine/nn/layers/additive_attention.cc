#include "engine/nn/layers/additive_attention.h"

#include <cmath>

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

AdditiveAttention::AdditiveAttention(const backend::AdditiveAttentionParams& p,
                                     AttentionProbs probs)
    : p_(p), probs_out_(probs == AttentionProbs::kOutput) {
  DLBENCH_CHECK(p.batch >= 1 && p.queries >= 1 && p.keys >= 1 && p.width >= 1 && p.value_width >= 1,
                "additive attention: batch, queries, keys, width and value_width must be >= 1");
}

std::vector<OutputInfo> AdditiveAttention::outputs(std::span<const ValueInfo> inputs) const {
  const char* layer = "additive attention";
  expect_shape(inputs[0].shape, p_.query_shape(), layer);
  expect_shape(inputs[1].shape, p_.key_shape(), layer);
  expect_shape(inputs[2].shape, p_.value_shape(), layer);
  expect_shape(inputs[3].shape, {p_.batch}, layer);
  DLBENCH_CHECK(inputs[3].dtype == DType::kI32,
                "additive attention: source lengths must be i32, got " + inputs[3].name);
  std::vector<OutputInfo> out = {{p_.output_shape(), inputs[0].dtype}};
  if (probs_out_) out.push_back({p_.probs_shape(), DType::kF32});
  return out;
}

std::vector<ParamDecl> AdditiveAttention::params() const {
  ParamDecl v{"v", {p_.width}, Init::kUniform, 1, ParamGroup::kDecayed};
  v.bound = 0.1f;
  // A scale, f32 in every precision as batch norm's are; one element would also leave the
  // compute-dtype parameters after it 2 bytes off the alignment cuBLASLt and our vectorized
  // kernels take.
  ParamDecl g{"g", {1}, Init::kConstant, 1, ParamGroup::kKeptF32};
  g.value = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p_.width)));
  return {v, g};
}

std::vector<StateDecl> AdditiveAttention::state(backend::Backend&) const {
  if (probs_out_) return {};
  const auto probs = static_cast<std::size_t>(p_.batch * p_.queries * p_.keys);
  return {{"probs", probs * sizeof(float), Init::kZeros}};
}

Tensor AdditiveAttention::probs(const StepContext& ctx) const {
  if (probs_out_) return ctx.outputs[1];
  return state_as(ctx.state[0], p_.probs_shape(), DType::kF32);
}

void AdditiveAttention::forward(const StepContext& ctx) {
  ctx.backend.additive_attention_forward(p_, ctx.inputs[0], ctx.inputs[1], ctx.inputs[2],
                                         ctx.params[0], ctx.params[1], ctx.inputs[3], ctx.output(),
                                         probs(ctx));
}

void AdditiveAttention::backward(const StepContext& ctx) {
  DLBENCH_CHECK(!probs_out_, "additive attention: probabilities given out are for inference");
  backend::AdditiveAttentionGrads grads{ctx.input_grads[0], ctx.input_grads[1], ctx.input_grads[2],
                                        ctx.param_grads[0], ctx.param_grads[1]};
  grads.q_mode = ctx.input_grad_modes[0];
  grads.k_mode = ctx.input_grad_modes[1];
  grads.values_mode = ctx.input_grad_modes[2];
  grads.param_mode = one_param_grad_mode(ctx);
  ctx.backend.additive_attention_backward(p_, ctx.inputs[0], ctx.inputs[1], ctx.inputs[2],
                                          ctx.params[0], ctx.params[1], ctx.inputs[3], probs(ctx),
                                          ctx.output_grad(), grads);
}

}  // namespace dlbench::nn
