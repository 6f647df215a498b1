#include "engine/nn/layers/multiply.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Multiply: y = a * b; da (+)= dy * b, db (+)= dy * a ------------------------------------
Shape Multiply::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[1], inputs[0], "multiply");
  return inputs[0];
}

void Multiply::forward(const StepContext& ctx) {
  ctx.backend.multiply(ctx.inputs[0], ctx.inputs[1], ctx.output(), GradMode::kOverwrite);
}

void Multiply::backward(const StepContext& ctx) {
  for (int i = 0; i < 2; ++i)
    if (ctx.input_grads[i].defined())
      ctx.backend.multiply(ctx.output_grad(), ctx.inputs[1 - i], ctx.input_grads[i],
                           ctx.input_grad_modes[i]);
}

}  // namespace dlbench::nn
