#include "engine/nn/losses/softmax_cross_entropy.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

std::vector<OutputInfo> SoftmaxCrossEntropy::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& logits = inputs[0].shape;
  const ValueInfo& labels = inputs[1];
  const int rank = logits.rank();
  DLBENCH_CHECK(rank >= 2,
                "softmax cross-entropy: logits must be [rows, classes] or [..., classes]");
  bool leading_match = labels.shape.rank() == rank - 1;
  for (int d = 0; leading_match && d < rank - 1; ++d) leading_match = labels.shape[d] == logits[d];
  DLBENCH_CHECK(labels.dtype == DType::kI32 && leading_match,
                "softmax cross-entropy: labels must be i32, shaped as the logits without their "
                "last axis");
  return {{Shape{1}, DType::kF32}};
}

void SoftmaxCrossEntropy::forward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "softmax cross-entropy writes the logits' first gradient");
  const std::int64_t rows = ctx.inputs[1].numel();
  const Tensor& dlogits = ctx.input_grads[0];
  ctx.backend.softmax_cross_entropy(
      flat(ctx.inputs[0], rows), ctx.inputs[1].reshaped({rows}), ctx.output(),
      dlogits.defined() ? flat(dlogits, rows) : Tensor(), ctx.loss_scale);
}

}  // namespace dlbench::nn
