#include "engine/nn/layers/select_position.h"

namespace dlbench::nn {

Shape SelectPosition::output_shape(std::span<const Shape> inputs) const {
  const Shape& x = inputs[0];
  DLBENCH_CHECK(sequence_ > 0 && position_ >= 0 && position_ < sequence_,
                "select_position: position " + std::to_string(position_) +
                    " is outside sequences of " + std::to_string(sequence_));
  DLBENCH_CHECK(x.rank() == 2 && x[0] % sequence_ == 0, "select_position: input " + x.str() +
                                                            " is not [batch * " +
                                                            std::to_string(sequence_) + ", width]");
  return {x[0] / sequence_, x[1]};
}

Tensor SelectPosition::by_sample(const Tensor& rows) const {
  return rows.reshaped({rows.dim(0) / sequence_, sequence_ * rows.dim(1)});
}

void SelectPosition::forward(const StepContext& ctx) {
  const Tensor& y = ctx.output();
  ctx.backend.copy_columns(by_sample(ctx.inputs[0]), position_ * y.dim(1), y, 0, y.dim(1),
                           GradMode::kOverwrite);
}

void SelectPosition::backward(const StepContext& ctx) {
  const Tensor& dx = ctx.input_grads[0];
  if (!dx.defined()) return;
  const GradMode mode = ctx.input_grad_modes[0];
  if (mode == GradMode::kOverwrite) ctx.backend.fill(dx, 0.0f);
  const Tensor& dy = ctx.output_grad();
  ctx.backend.copy_columns(dy, 0, by_sample(dx), position_ * dy.dim(1), dy.dim(1), mode);
}

}  // namespace dlbench::nn
