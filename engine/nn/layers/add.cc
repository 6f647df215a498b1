#include "engine/nn/layers/add.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Add: y = a + b; da = db = dy ----------------------------------------------------------
Shape Add::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[1], inputs[0], "add");
  return inputs[0];
}

void Add::forward(const StepContext& ctx) {
  ctx.backend.add(ctx.inputs[0], ctx.inputs[1], ctx.output());
}

void Add::backward(const StepContext& ctx) {
  for (int i = 0; i < 2; ++i)
    pass_gradient(ctx.backend, ctx.output_grad(), ctx.input_grads[i], ctx.input_grad_modes[i]);
}

}  // namespace dlbench::nn
