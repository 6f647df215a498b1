#include "engine/nn/layers/dropout.h"

#include <cmath>

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

Dropout::Dropout(float probability, std::uint64_t seed) : p_{probability, seed} {
  DLBENCH_CHECK(std::isfinite(probability) && probability >= 0.0f && probability < 1.0f,
                "dropout: the probability must lie in [0, 1)");
}

std::vector<StateDecl> Dropout::state(backend::Backend&) const {
  return {{"step", sizeof(std::int32_t), Init::kZeros}};
}

void Dropout::forward(const StepContext& ctx) {
  if (ctx.mode == Mode::kTrain)
    ctx.backend.dropout_forward(p_, as_i32(ctx.state[0], 1), ctx.inputs[0], ctx.output());
  else
    ctx.backend.copy(ctx.inputs[0], ctx.output());
}

void Dropout::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.dropout_backward(p_, as_i32(ctx.state[0], 1), ctx.output_grad(), ctx.input_grads[0],
                               ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
