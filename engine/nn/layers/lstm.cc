#include "engine/nn/layers/lstm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "engine/core/memory.h"
#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

Lstm::Lstm(const backend::LstmParams& p, Mode mode, LstmStates states, float bound)
    : p_(p), mode_(mode), states_(states == LstmStates::kCarried), bound_(bound) {
  DLBENCH_CHECK(p.batch >= 1 && p.steps >= 1 && p.input >= 1 && p.hidden >= 1,
                "lstm: batch, steps, input and hidden must be >= 1");
  if (bound_ <= 0) bound_ = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.hidden)));
}

std::vector<OutputInfo> Lstm::outputs(std::span<const ValueInfo> inputs) const {
  expect_shape(inputs[0].shape, p_.input_shape(), "lstm");
  const DType dtype = inputs[0].dtype;
  std::vector<OutputInfo> out = {{p_.output_shape(), dtype}};
  if (states_) {
    expect_shape(inputs[1].shape, p_.state_shape(), "lstm");
    expect_shape(inputs[2].shape, p_.state_shape(), "lstm");
    out.push_back({p_.state_shape(), dtype});
    out.push_back({p_.state_shape(), dtype});
  }
  return out;
}

std::vector<ParamDecl> Lstm::params() const {
  ParamDecl w{"weights", {p_.weights()}, Init::kUniform, 1, ParamGroup::kDecayed};
  w.bound = bound_;
  return {w};
}

std::vector<StateDecl> Lstm::state(backend::Backend& be) const {
  if (mode_ != Mode::kTrain) return {};
  // The reserve's size depends on the dtype on CUDA, which is not known here.
  std::vector<StateDecl> out = {{"reserve", be.largest_lstm_reserve_bytes(p_), Init::kZeros}};
  // With states: room for their two gradients where they are added rather than written.
  const std::size_t state_bytes = static_cast<std::size_t>(p_.batch * p_.hidden) * sizeof(float);
  if (states_) out.push_back({"state_grads", 2 * align_up(state_bytes), Init::kZeros});
  return out;
}

SavedForBackward Lstm::saved_for_backward() const {
  if (mode_ != Mode::kTrain) return {};
  return states_ ? SavedForBackward{{0, 1, 2}, {0}} : SavedForBackward{{0}, {0}};
}

void Lstm::forward(const StepContext& ctx) {
  const bool train = mode_ == Mode::kTrain;
  const Tensor none;
  ctx.backend.lstm_forward(p_, ctx.inputs[0], ctx.params[0], states_ ? ctx.inputs[1] : none,
                           states_ ? ctx.inputs[2] : none, ctx.output(),
                           states_ ? ctx.outputs[1] : none, states_ ? ctx.outputs[2] : none,
                           train ? ctx.state[0] : none);
}

void Lstm::backward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "the LSTM always passes a gradient on");
  const Tensor none;
  Tensor dh0, dc0, dhn, dcn;
  if (states_) {
    dhn = ctx.output_grads[1], dcn = ctx.output_grads[2];
    dh0 = ctx.input_grads[1], dc0 = ctx.input_grads[2];
    // The op writes the states' gradients; where they are to be added, it writes them to
    // scratch first.
    const Tensor& scratch = ctx.state[1];
    const Shape s = p_.state_shape();
    if (ctx.input_grad_modes[1] == GradMode::kAccumulate && dh0.defined())
      dh0 = Tensor(scratch.data(), s, dh0.dtype(), dh0.device());
    if (ctx.input_grad_modes[2] == GradMode::kAccumulate && dc0.defined())
      dc0 = Tensor(static_cast<std::byte*>(scratch.data()) + align_up(dc0.bytes()), s, dc0.dtype(),
                   dc0.device());
  }
  ctx.backend.lstm_backward(p_, ctx.inputs[0], ctx.params[0], states_ ? ctx.inputs[1] : none,
                            states_ ? ctx.inputs[2] : none, ctx.output(), ctx.output_grad(), dhn,
                            dcn, ctx.state[0], ctx.input_grads[0], ctx.input_grad_modes[0], dh0,
                            dc0, ctx.param_grads[0], ctx.param_grad_modes[0]);
  for (int i : {1, 2})
    if (states_ && ctx.input_grads[i].defined() && ctx.input_grad_modes[i] == GradMode::kAccumulate)
      ctx.backend.accumulate(i == 1 ? dh0 : dc0, ctx.input_grads[i]);
}

}  // namespace dlbench::nn
