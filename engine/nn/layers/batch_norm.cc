#include "engine/nn/layers/batch_norm.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- BatchNorm: y = γ (x - μ) / sqrt(σ² + ε) + β (then + r, then ReLU, with a tail) --------
enum BatchNormState { kRunningMean, kRunningVar, kSavedMean, kSavedInvStd, kReluMask };

const char* BatchNorm::kind() const {
  if (p_.residual_norm) return "dual_batch_norm+add+relu";
  if (p_.residual) return "batch_norm+add+relu";
  return p_.activation == backend::Activation::kRelu ? "batch_norm+relu" : "batch_norm";
}

Shape BatchNorm::output_shape(std::span<const Shape> inputs) const {
  if (inputs[0].numel() != p_.rows * p_.channels || inputs[0][inputs[0].rank() - 1] != p_.channels)
    throw Error(ErrorKind::kInternal,
                "batch_norm: input " + inputs[0].str() + " does not have the layer's channels");
  if (p_.residual) expect_shape(inputs[1], inputs[0], "batch_norm's residual");
  if (p_.statistics) {
    expect_shape(inputs.back(), p_.statistics_shape(), "batch_norm's statistics");
    if (p_.residual_norm)
      expect_shape(inputs[inputs.size() - 2], p_.statistics_shape(), "batch_norm's statistics");
  }
  return inputs[0];
}

std::vector<ParamDecl> BatchNorm::params() const {
  ParamDecl gamma{"gamma", {p_.channels}, Init::kOnes, 1, ParamGroup::kKeptF32};
  ParamDecl beta{"beta", {p_.channels}, Init::kZeros, 1, ParamGroup::kKeptF32};
  if (p_.residual_norm) return {gamma, beta, gamma, beta};
  return {gamma, beta};
}

std::vector<StateDecl> BatchNorm::state(backend::Backend&) const {
  std::size_t bytes = static_cast<std::size_t>(p_.channels) * sizeof(float);
  const std::vector<StateDecl> rows = {{"running_mean", bytes, Init::kZeros, true},
                                       {"running_var", bytes, Init::kOnes, true},
                                       {"saved_mean", bytes, Init::kZeros},
                                       {"saved_inv_std", bytes, Init::kZeros}};
  std::vector<StateDecl> state = rows;
  if (keeps_mask_)
    state.push_back({"relu_mask", static_cast<std::size_t>(p_.mask_words()) * 4, Init::kZeros});
  if (p_.residual_norm)
    for (StateDecl d : rows) {
      d.name = "residual_" + d.name;
      state.push_back(std::move(d));
    }
  return state;
}

std::optional<ReluEpilogue> BatchNorm::relu_epilogue() const {
  if (p_.has_tail()) return std::nullopt;
  return with_relu_epilogue(backend::OpKind::kBatchNormTraining, p_);
}

void BatchNorm::fuse_relu(Mode mode) {
  p_.activation = backend::Activation::kRelu;
  keeps_mask_ = mode == Mode::kTrain;
}

std::optional<ReluEpilogue> BatchNorm::residual_relu_epilogue() const {
  if (p_.has_tail()) return std::nullopt;
  backend::BatchNormParams p = p_;
  p.residual = true;
  p.activation = backend::Activation::kRelu;
  return ReluEpilogue{backend::OpKind::kBatchNormTraining, p};
}

void BatchNorm::fuse_residual_relu(Mode mode) {
  p_.residual = true;
  fuse_relu(mode);
}

std::optional<ReluEpilogue> BatchNorm::normalized_residual_relu_epilogue(
    const BatchNorm& other) const {
  const backend::BatchNormParams& r = other.p_;
  const bool alike = r.rows == p_.rows && r.channels == p_.channels && r.epsilon == p_.epsilon &&
                     r.momentum == p_.momentum;
  if (!alike || r.has_tail() || r.statistics || p_.statistics) return std::nullopt;
  std::optional<ReluEpilogue> tail = residual_relu_epilogue();
  if (tail) std::get<backend::BatchNormParams>(tail->params).residual_norm = true;
  return tail;
}

void BatchNorm::fuse_normalized_residual_relu(Mode mode) {
  DLBENCH_CHECK(mode == Mode::kTrain,
                "a residual's batch norm folds into its convolution for inference");
  p_.residual_norm = true;
  fuse_residual_relu(mode);
}

backend::BatchNormParams BatchNorm::statistics_forward() const {
  backend::BatchNormParams p = p_;
  p.statistics = true;
  return p;
}

// The residual's batch norm's tensors (p.residual_norm): its parameters and its state rows come
// after this one's; forward adds its statistics and backward its gradients.
backend::ResidualNorm BatchNorm::residual_norm(const StepContext& ctx) const {
  if (!p_.residual_norm) return {};
  auto row = [&](int i) { return ctx.state[residual_state() + i].reshaped({p_.channels}); };
  backend::ResidualNorm rn;
  rn.gamma = ctx.params[2], rn.beta = ctx.params[3];
  rn.running_mean = row(kRunningMean), rn.running_var = row(kRunningVar);
  rn.saved_mean = row(kSavedMean), rn.saved_inv_std = row(kSavedInvStd);
  return rn;
}

void BatchNorm::forward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  Tensor x = flat(ctx.inputs[0], p_.rows), y = flat(ctx.output(), p_.rows);
  Tensor residual = p_.residual ? flat(ctx.inputs[1], p_.rows) : Tensor();
  if (ctx.mode == Mode::kTrain) {
    DLBENCH_CHECK(keeps_mask_ || p_.activation == backend::Activation::kNone,
                  "a ReLU tail fused for inference does not train");
    Tensor mask = keeps_mask_ ? as_i32(ctx.state[kReluMask], p_.mask_words()) : Tensor();
    // The statistics inputs come last: x's, then the residual's.
    const std::size_t stats = ctx.inputs.size() - (p_.residual_norm ? 2 : 1);
    backend::ResidualNorm rn = residual_norm(ctx);
    if (p_.residual_norm && p_.statistics) rn.statistics = ctx.inputs[stats + 1];
    ctx.backend.batch_norm_forward_training(
        p_, x, ctx.params[0], ctx.params[1], y, per_channel(kSavedMean), per_channel(kSavedInvStd),
        per_channel(kRunningMean), per_channel(kRunningVar), residual, mask,
        p_.statistics ? ctx.inputs[stats] : Tensor(), rn);
  } else {
    DLBENCH_CHECK(!p_.statistics, "batch statistics handed over are for training");
    ctx.backend.batch_norm_forward_inference(p_, x, ctx.params[0], ctx.params[1],
                                             per_channel(kRunningMean), per_channel(kRunningVar), y,
                                             residual);
  }
}

// With a tail, the output gradient is the ReLU's; the mask turns it into the normalization's
// (and the residual's, where the residual needs one) inside batch_norm_backward.
void BatchNorm::backward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "batch norm always passes a gradient on");
  const bool residual_grad = p_.residual && ctx.input_grads[1].defined();
  const Tensor dresidual = residual_grad ? flat(ctx.input_grads[1], p_.rows) : Tensor();
  const GradMode residual_mode = residual_grad ? ctx.input_grad_modes[1] : GradMode::kOverwrite;
  Tensor mask = keeps_mask_ ? as_i32(ctx.state[kReluMask], p_.mask_words()) : Tensor();
  backend::ResidualNorm rn = residual_norm(ctx);
  if (p_.residual_norm) rn.dgamma = ctx.param_grads[2], rn.dbeta = ctx.param_grads[3];
  ctx.backend.batch_norm_backward(
      p_, flat(ctx.inputs[0], p_.rows), flat(ctx.output_grad(), p_.rows), ctx.params[0],
      per_channel(kSavedMean), per_channel(kSavedInvStd), flat(ctx.input_grads[0], p_.rows),
      ctx.param_grads[0], ctx.param_grads[1], ctx.input_grad_modes[0], mask, dresidual,
      residual_mode, p_.residual_norm ? flat(ctx.inputs[1], p_.rows) : Tensor(), rn);
}

}  // namespace dlbench::nn
