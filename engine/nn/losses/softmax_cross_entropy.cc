#include "engine/nn/losses/softmax_cross_entropy.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

std::vector<OutputInfo> SoftmaxCrossEntropy::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& logits = inputs[0].shape;
  const ValueInfo& labels = inputs[1];
  const int rank = logits.rank();
  DLBENCH_CHECK(rank >= 2,
                "softmax cross-entropy: logits must be [rows, classes] or [..., classes]");
  expect_labels_of(logits, labels, "softmax cross-entropy");
  DLBENCH_CHECK(class_weights_.empty() ||
                    static_cast<std::int64_t>(class_weights_.size()) == logits[rank - 1],
                "softmax cross-entropy: one class weight per class");
  return {{Shape{1}, DType::kF32}};
}

std::vector<StateDecl> SoftmaxCrossEntropy::state(backend::Backend&) const {
  if (class_weights_.empty()) return {};
  StateDecl weights{"class_weights", class_weights_.size() * sizeof(float), Init::kValues};
  weights.values = class_weights_;
  return {weights};
}

void SoftmaxCrossEntropy::forward(const StepContext& ctx) {
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "softmax cross-entropy writes the logits' first gradient");
  const std::int64_t rows = ctx.inputs[1].numel();
  const Tensor& dlogits = ctx.input_grads[0];
  ctx.backend.softmax_cross_entropy(
      flat(ctx.inputs[0], rows), ctx.inputs[1].reshaped({rows}), ctx.output(),
      dlogits.defined() ? flat(dlogits, rows) : Tensor(), ctx.loss_scale,
      class_weights_.empty()
          ? Tensor()
          : ctx.state[0].reshaped({static_cast<std::int64_t>(class_weights_.size())}),
      p_);
}

}  // namespace dlbench::nn
