#include "engine/nn/losses/soft_dice.h"

#include <string>

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

std::vector<OutputInfo> SoftDice::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& scores = inputs[0].shape;
  const ValueInfo& labels = inputs[1];
  const int rank = scores.rank();
  DLBENCH_CHECK(rank >= 3, "soft Dice: scores must be [samples, ..., classes]");
  expect_labels_of(scores, labels, "soft Dice");
  DLBENCH_CHECK(first_class_ >= 0 && first_class_ < scores[rank - 1],
                "soft Dice: the first counted class " + std::to_string(first_class_) +
                    " is not one of the " + std::to_string(scores[rank - 1]) + " classes");
  return {{Shape{1}, DType::kF32}};
}

void SoftDice::forward(const StepContext& ctx) {
  const Shape& s = ctx.inputs[0].shape();
  backend::SoftDiceParams p;
  p.classes = s[s.rank() - 1];
  p.samples = s[0];
  p.pixels = ctx.inputs[1].numel() / p.samples;
  p.first_class = first_class_;
  const std::int64_t rows = p.samples * p.pixels;
  const Tensor& dscores = ctx.input_grads[0];
  ctx.backend.soft_dice(p, flat(ctx.inputs[0], rows), ctx.inputs[1].reshaped({rows}), ctx.output(),
                        dscores.defined() ? flat(dscores, rows) : Tensor(), ctx.loss_scale,
                        ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
