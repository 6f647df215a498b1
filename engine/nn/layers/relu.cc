#include "engine/nn/layers/relu.h"

namespace dlbench::nn {

// --- Relu: y = max(x, 0); dx = dy · [y > 0] -----------------------------------------------
void Relu::forward(const StepContext& ctx) {
  ctx.backend.activation_forward(backend::Activation::kRelu, ctx.inputs[0], ctx.output());
}

void Relu::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.activation_backward(backend::Activation::kRelu, ctx.output(), ctx.output_grad(),
                                  ctx.input_grads[0], ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
