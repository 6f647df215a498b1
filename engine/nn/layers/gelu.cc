#include "engine/nn/layers/gelu.h"

namespace dlbench::nn {

void Gelu::forward(const StepContext& ctx) {
  ctx.backend.gelu_forward(ctx.inputs[0], ctx.output());
}

void Gelu::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.gelu_backward(ctx.inputs[0], ctx.output_grad(), ctx.input_grads[0],
                            ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
