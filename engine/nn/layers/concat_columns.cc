#include "engine/nn/layers/concat_columns.h"

#include <string>

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

// --- ConcatColumns: y[:, c_k : c_k + w_k] = x_k; dx_k (+)= dy[:, c_k : c_k + w_k] ----------
Shape ConcatColumns::output_shape(std::span<const Shape> inputs) const {
  DLBENCH_CHECK(inputs_ >= 2, "concat_columns: fewer than two inputs");
  const Shape& first = inputs[0];
  DLBENCH_CHECK(first.rank() >= 2, "concat_columns: input " + first.str() + " has no columns");
  const int last = first.rank() - 1;
  std::int64_t columns = 0;
  for (const Shape& x : inputs) {
    bool same_rows = x.rank() == first.rank() && x[last] > 0;
    for (int d = 0; same_rows && d < last; ++d) same_rows = x[d] == first[d];
    DLBENCH_CHECK(same_rows, "concat_columns: input " + x.str() + " does not match " + first.str() +
                                 " but in its last axis");
    columns += x[last];
  }
  Shape out = first;
  out[last] = columns;
  return out;
}

namespace {

std::int64_t last_axis(const Shape& s) {
  return s[s.rank() - 1];
}

// t as [rows, last axis].
Tensor as_columns(const Tensor& t) {
  return flat(t, t.numel() / last_axis(t.shape()));
}

}  // namespace

void ConcatColumns::forward(const StepContext& ctx) {
  const Tensor y = as_columns(ctx.output());
  std::int64_t column = 0;
  for (const Tensor& input : ctx.inputs) {
    const Tensor x = as_columns(input);
    ctx.backend.copy_columns(x, 0, y, column, x.shape()[1], GradMode::kOverwrite);
    column += x.shape()[1];
  }
}

void ConcatColumns::backward(const StepContext& ctx) {
  const Tensor dy = as_columns(ctx.output_grad());
  std::int64_t column = 0;
  for (std::size_t k = 0; k < ctx.inputs.size(); ++k) {
    const std::int64_t width = last_axis(ctx.inputs[k].shape());
    if (ctx.input_grads[k].defined())
      ctx.backend.copy_columns(dy, column, as_columns(ctx.input_grads[k]), 0, width,
                               ctx.input_grad_modes[k]);
    column += width;
  }
}

}  // namespace dlbench::nn
