#include "engine/nn/layers/layer_norm.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {
namespace {

enum LayerNormState { kSavedMean, kSavedInvStd };

}  // namespace

LayerNorm::LayerNorm(const Shape& shape, float epsilon) : shape_(shape) {
  DLBENCH_CHECK(shape.rank() >= 2 && shape.numel() > 0,
                "layer_norm: the input must be [rows..., width]");
  p_.width = shape[shape.rank() - 1];
  p_.rows = shape.numel() / p_.width;
  p_.epsilon = epsilon;
}

Shape LayerNorm::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], shape_, "layer_norm");
  return shape_;
}

std::vector<ParamDecl> LayerNorm::params() const {
  return {{"gamma", {p_.width}, Init::kOnes, 1, ParamGroup::kKeptF32},
          {"beta", {p_.width}, Init::kZeros, 1, ParamGroup::kKeptF32}};
}

std::vector<StateDecl> LayerNorm::state(backend::Backend&) const {
  const std::size_t per_row = static_cast<std::size_t>(p_.rows) * sizeof(float);
  return {{"saved_mean", per_row, Init::kZeros}, {"saved_inv_std", per_row, Init::kZeros}};
}

void LayerNorm::forward(const StepContext& ctx) {
  ctx.backend.layer_norm_forward(p_, ctx.inputs[0], ctx.params[0], ctx.params[1], ctx.output(),
                                 ctx.state[kSavedMean].reshaped({p_.rows}),
                                 ctx.state[kSavedInvStd].reshaped({p_.rows}));
}

void LayerNorm::backward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "layer norm always passes a gradient on");
  ctx.backend.layer_norm_backward(p_, ctx.inputs[0], ctx.output_grad(), ctx.params[0],
                                  ctx.state[kSavedMean].reshaped({p_.rows}),
                                  ctx.state[kSavedInvStd].reshaped({p_.rows}), ctx.input_grads[0],
                                  ctx.input_grad_modes[0], ctx.param_grads[0], ctx.param_grads[1]);
}

}  // namespace dlbench::nn
