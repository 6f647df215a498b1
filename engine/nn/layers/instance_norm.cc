#include "engine/nn/layers/instance_norm.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {
namespace {

// The state rows: the saved statistics of every sample ([samples, channels] each), the running
// statistics the batch-norm op updates and nothing reads (momentum 0 keeps them as they are),
// and room for a later sample's γ and β gradients before they are added to the first's.
enum InstanceNormState { kSavedMean, kSavedInvStd, kRunning, kGradScratch };

// Rows [first, first + rows) of a tensor viewed as [..., width].
Tensor rows_of(const Tensor& t, std::int64_t first, std::int64_t rows, std::int64_t width) {
  const std::size_t offset = static_cast<std::size_t>(first * width) * size_of(t.dtype());
  return Tensor(static_cast<char*>(t.data()) + offset, {rows, width}, t.dtype(), t.device());
}

// Row `i` of an f32 state tensor viewed as [..., width], as a vector [width].
Tensor state_row(const Tensor& state, std::int64_t i, std::int64_t width) {
  return rows_of(state, i, 1, width).reshaped({width});
}

}  // namespace

InstanceNorm::InstanceNorm(const Shape& shape, float epsilon) : shape_(shape) {
  DLBENCH_CHECK(shape.rank() >= 3 && shape.numel() > 0,
                "instance_norm: the input must be [samples, positions..., channels]");
  samples_ = shape[0];
  channels_ = shape[shape.rank() - 1];
  per_sample_.rows = shape.numel() / (samples_ * channels_);
  per_sample_.channels = channels_;
  per_sample_.epsilon = epsilon;
  per_sample_.momentum = 0.0f;
}

Shape InstanceNorm::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], shape_, "instance_norm");
  return shape_;
}

std::vector<ParamDecl> InstanceNorm::params() const {
  return {{"gamma", {channels_}, Init::kOnes, 1, ParamGroup::kKeptF32},
          {"beta", {channels_}, Init::kZeros, 1, ParamGroup::kKeptF32}};
}

std::vector<StateDecl> InstanceNorm::state(backend::Backend&) const {
  const std::size_t per_sample = static_cast<std::size_t>(samples_ * channels_) * sizeof(float);
  const std::size_t pair = static_cast<std::size_t>(2 * channels_) * sizeof(float);
  return {{"saved_mean", per_sample, Init::kZeros},
          {"saved_inv_std", per_sample, Init::kZeros},
          {"running_unused", pair, Init::kOnes},
          {"grad_scratch", pair, Init::kZeros}};
}

Tensor InstanceNorm::sample(const Tensor& t, std::int64_t n) const {
  return rows_of(t, n * per_sample_.rows, per_sample_.rows, channels_);
}

void InstanceNorm::forward(const StepContext& ctx) {
  const Tensor& running = ctx.state[kRunning];
  for (std::int64_t n = 0; n < samples_; ++n)
    ctx.backend.batch_norm_forward_training(
        per_sample_, sample(ctx.inputs[0], n), ctx.params[0], ctx.params[1],
        sample(ctx.output(), n), state_row(ctx.state[kSavedMean], n, channels_),
        state_row(ctx.state[kSavedInvStd], n, channels_), state_row(running, 0, channels_),
        state_row(running, 1, channels_));
}

// Sample 0 writes γ's and β's gradients; each later one writes its own into scratch, then adds
// them (batch_norm_backward overwrites both).
void InstanceNorm::backward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "instance norm always passes a gradient on");
  const Tensor& scratch = ctx.state[kGradScratch];
  for (std::int64_t n = 0; n < samples_; ++n) {
    const Tensor dgamma = n == 0 ? ctx.param_grads[0] : state_row(scratch, 0, channels_);
    const Tensor dbeta = n == 0 ? ctx.param_grads[1] : state_row(scratch, 1, channels_);
    ctx.backend.batch_norm_backward(
        per_sample_, sample(ctx.inputs[0], n), sample(ctx.output_grad(), n), ctx.params[0],
        state_row(ctx.state[kSavedMean], n, channels_),
        state_row(ctx.state[kSavedInvStd], n, channels_), sample(ctx.input_grads[0], n), dgamma,
        dbeta, ctx.input_grad_modes[0]);
    if (n == 0) continue;
    ctx.backend.accumulate(dgamma, ctx.param_grads[0]);
    ctx.backend.accumulate(dbeta, ctx.param_grads[1]);
  }
}

}  // namespace dlbench::nn
