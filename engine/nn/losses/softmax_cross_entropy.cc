#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::nn {

std::vector<OutputInfo> SoftmaxCrossEntropy::outputs(std::span<const ValueInfo> inputs) const {
  const ValueInfo& logits = inputs[0];
  const ValueInfo& labels = inputs[1];
  DLBENCH_CHECK(logits.shape.rank() == 2, "softmax cross-entropy: logits must be [rows, classes]");
  DLBENCH_CHECK(labels.dtype == DType::kI32 && labels.shape == Shape{logits.shape[0]},
                "softmax cross-entropy: labels must be i32 [rows]");
  return {{Shape{1}, DType::kF32}};
}

void SoftmaxCrossEntropy::forward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "softmax cross-entropy writes the logits' first gradient");
  ctx.backend.softmax_cross_entropy(ctx.inputs[0], ctx.inputs[1], ctx.output(), ctx.input_grads[0],
                                    ctx.loss_scale);
}

}  // namespace dlbench::nn
