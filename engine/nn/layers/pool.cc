#include "engine/nn/layers/pool.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- Pool ----------------------------------------------------------------------------------
Shape Pool::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], p_.input_shape(), kind());
  return p_.output_shape();
}

std::vector<StateDecl> Pool::state(backend::Backend& be) const {
  return {{"workspace", be.pool_workspace_bytes(p_), Init::kZeros}};
}

void Pool::forward(const StepContext& ctx) {
  ctx.backend.pool_forward(p_, ctx.inputs[0], ctx.output(), ctx.state[0]);
}

void Pool::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.pool_backward(p_, ctx.inputs[0], ctx.output(), ctx.output_grad(), ctx.state[0],
                            ctx.input_grads[0], ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
