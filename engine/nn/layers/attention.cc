#include "engine/nn/layers/attention.h"

#include <string>

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

Attention::Attention(const backend::AttentionParams& p, AttentionLengths lengths)
    : p_(p), lengths_(lengths) {}

int Attention::num_inputs() const {
  switch (lengths_) {
    case AttentionLengths::kNone:
      return 3;
    case AttentionLengths::kShared:
      return 4;
    case AttentionLengths::kSeparate:
      return 5;
  }
  return 3;
}

std::vector<OutputInfo> Attention::outputs(std::span<const ValueInfo> inputs) const {
  expect_shape(inputs[0].shape, {p_.batch * p_.seq_q, p_.width()}, "attention (q)");
  expect_shape(inputs[1].shape, {p_.batch * p_.seq_kv, p_.width()}, "attention (k)");
  expect_shape(inputs[2].shape, {p_.batch * p_.seq_kv, p_.width()}, "attention (v)");
  for (std::size_t i = 3; i < inputs.size(); ++i) {
    expect_shape(inputs[i].shape, {p_.batch}, "attention (lengths)");
    DLBENCH_CHECK(inputs[i].dtype == DType::kI32,
                  "attention: sequence lengths must be i32, got " + inputs[i].name);
  }
  return {{inputs[0].shape, inputs[0].dtype, true}};
}

std::vector<StateDecl> Attention::state(backend::Backend&) const {
  const auto rows = static_cast<std::size_t>(p_.batch * p_.heads * p_.seq_q);
  return {{"stats", rows * sizeof(float), Init::kZeros}};
}

SavedForBackward Attention::saved_for_backward() const {
  SavedForBackward saved{{}, {0}};
  for (int i = 0; i < num_inputs(); ++i) saved.inputs.push_back(i);
  return saved;
}

Tensor Attention::q_lengths(const StepContext& ctx) const {
  return lengths_ == AttentionLengths::kNone ? Tensor{} : ctx.inputs[3];
}

Tensor Attention::kv_lengths(const StepContext& ctx) const {
  switch (lengths_) {
    case AttentionLengths::kNone:
      return {};
    case AttentionLengths::kShared:
      return ctx.inputs[3];
    case AttentionLengths::kSeparate:
      return ctx.inputs[4];
  }
  return {};
}

void Attention::forward(const StepContext& ctx) {
  ctx.backend.attention_forward(
      p_, ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], q_lengths(ctx), kv_lengths(ctx),
      ctx.output(), state_as(ctx.state[0], {p_.batch, p_.heads, p_.seq_q}, DType::kF32));
}

void Attention::backward(const StepContext& ctx) {
  // The op writes dq, dk and dv in one mode, each as its own tensor: one value feeding two of
  // q, k and v would need its two gradients summed, which no model here asks for.
  for (int i = 0; i < 3; ++i)
    DLBENCH_CHECK(ctx.input_grads[i].defined() &&
                      ctx.input_grad_modes[i] == ctx.input_grad_modes[0] &&
                      (i == 0 || ctx.input_grads[i].data() != ctx.input_grads[0].data()) &&
                      (i != 2 || ctx.input_grads[2].data() != ctx.input_grads[1].data()),
                  "attention: q, k and v must be three values that each need a gradient, "
                  "written in one mode");
  ctx.backend.attention_backward(
      p_, ctx.inputs[0], ctx.inputs[1], ctx.inputs[2], ctx.output(), ctx.output_grad(),
      state_as(ctx.state[0], {p_.batch, p_.heads, p_.seq_q}, DType::kF32), q_lengths(ctx),
      kv_lengths(ctx), ctx.input_grads[0], ctx.input_grads[1], ctx.input_grads[2],
      ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
