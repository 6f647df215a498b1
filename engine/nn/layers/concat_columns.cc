#include "engine/nn/layers/concat_columns.h"

#include <string>

namespace dlbench::nn {

// --- ConcatColumns: y[:, c_k : c_k + w_k] = x_k; dx_k (+)= dy[:, c_k : c_k + w_k] ----------
Shape ConcatColumns::output_shape(std::span<const Shape> inputs) const {
  DLBENCH_CHECK(inputs_ >= 2, "concat_columns: fewer than two inputs");
  std::int64_t columns = 0;
  for (const Shape& x : inputs) {
    DLBENCH_CHECK(x.rank() == 2 && x[0] == inputs[0][0] && x[1] > 0,
                  "concat_columns: input " + x.str() + " is not [" + std::to_string(inputs[0][0]) +
                      ", columns]");
    columns += x[1];
  }
  return Shape{inputs[0][0], columns};
}

void ConcatColumns::forward(const StepContext& ctx) {
  std::int64_t column = 0;
  for (const Tensor& x : ctx.inputs) {
    ctx.backend.copy_columns(x, 0, ctx.output(), column, x.shape()[1], GradMode::kOverwrite);
    column += x.shape()[1];
  }
}

void ConcatColumns::backward(const StepContext& ctx) {
  std::int64_t column = 0;
  for (std::size_t k = 0; k < ctx.inputs.size(); ++k) {
    const std::int64_t width = ctx.inputs[k].shape()[1];
    if (ctx.input_grads[k].defined())
      ctx.backend.copy_columns(ctx.output_grad(), column, ctx.input_grads[k], 0, width,
                               ctx.input_grad_modes[k]);
    column += width;
  }
}

}  // namespace dlbench::nn
