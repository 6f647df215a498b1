#include "engine/nn/layers/batch_norm.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- BatchNorm: y = γ (x - μ) / sqrt(σ² + ε) + β ------------------------------------------
enum BatchNormState { kRunningMean, kRunningVar, kSavedMean, kSavedInvStd };

Shape BatchNorm::output_shape(std::span<const Shape> inputs) const {
  if (inputs[0].numel() != p_.rows * p_.channels || inputs[0][inputs[0].rank() - 1] != p_.channels)
    throw Error(ErrorKind::kInternal,
                "batch_norm: input " + inputs[0].str() + " does not have the layer's channels");
  return inputs[0];
}

std::vector<ParamDecl> BatchNorm::params() const {
  ParamDecl gamma{"gamma", {p_.channels}, Init::kOnes, 1, ParamGroup::kKeptF32};
  ParamDecl beta{"beta", {p_.channels}, Init::kZeros, 1, ParamGroup::kKeptF32};
  return {gamma, beta};
}

std::vector<StateDecl> BatchNorm::state(backend::Backend&) const {
  std::size_t bytes = static_cast<std::size_t>(p_.channels) * sizeof(float);
  return {{"running_mean", bytes, Init::kZeros},
          {"running_var", bytes, Init::kOnes},
          {"saved_mean", bytes, Init::kZeros},
          {"saved_inv_std", bytes, Init::kZeros}};
}

void BatchNorm::forward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  Tensor x = flat(ctx.inputs[0], p_.rows), y = flat(ctx.output(), p_.rows);
  if (ctx.mode == Mode::kTrain)
    ctx.backend.batch_norm_forward_training(p_, x, ctx.params[0], ctx.params[1], y,
                                            per_channel(kSavedMean), per_channel(kSavedInvStd),
                                            per_channel(kRunningMean), per_channel(kRunningVar));
  else
    ctx.backend.batch_norm_forward_inference(p_, x, ctx.params[0], ctx.params[1],
                                             per_channel(kRunningMean), per_channel(kRunningVar),
                                             y);
}

void BatchNorm::backward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "batch norm always passes a gradient on");
  ctx.backend.batch_norm_backward(
      p_, flat(ctx.inputs[0], p_.rows), flat(ctx.output_grad(), p_.rows), ctx.params[0],
      per_channel(kSavedMean), per_channel(kSavedInvStd), flat(ctx.input_grads[0], p_.rows),
      ctx.param_grads[0], ctx.param_grads[1], ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
