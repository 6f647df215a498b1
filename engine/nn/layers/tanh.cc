#include "engine/nn/layers/tanh.h"

namespace dlbench::nn {

void Tanh::forward(const StepContext& ctx) {
  ctx.backend.tanh_forward(ctx.inputs[0], ctx.output());
}

void Tanh::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.tanh_backward(ctx.output(), ctx.output_grad(), ctx.input_grads[0],
                            ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
