#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"

namespace dlbench::nn {

std::vector<OutputInfo> SigmoidBinaryCrossEntropy::outputs(
    std::span<const ValueInfo> inputs) const {
  const ValueInfo& logits = inputs[0];
  const ValueInfo& targets = inputs[1];
  DLBENCH_CHECK(logits.shape.rank() == 2 && logits.shape[1] == 1,
                "sigmoid binary cross-entropy: logits must be [rows, 1]");
  DLBENCH_CHECK(targets.dtype == DType::kF32 && targets.shape == logits.shape,
                "sigmoid binary cross-entropy: targets must be f32 [rows, 1]");
  return {{Shape{1}, DType::kF32}};
}

void SigmoidBinaryCrossEntropy::forward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "sigmoid binary cross-entropy writes the logits' first gradient");
  ctx.backend.sigmoid_binary_cross_entropy(ctx.inputs[0], ctx.inputs[1], ctx.output(),
                                           ctx.input_grads[0], ctx.loss_scale);
}

}  // namespace dlbench::nn
