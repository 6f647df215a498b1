#include "engine/nn/layers/split_columns.h"

#include <numeric>

namespace dlbench::nn {

// --- SplitColumns: y_k = x[:, c_k : c_k + w_k]; dx[:, c_k : c_k + w_k] (+)= dy_k ------------
std::vector<OutputInfo> SplitColumns::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& x = inputs[0].shape;
  const std::int64_t total = std::accumulate(widths_.begin(), widths_.end(), std::int64_t{0});
  DLBENCH_CHECK(
      !widths_.empty() && x.rank() == 2 && x[1] == total,
      "split_columns: input " + x.str() + " is not [rows, " + std::to_string(total) + "]");
  std::vector<OutputInfo> out;
  for (std::int64_t w : widths_) {
    DLBENCH_CHECK(w > 0, "split_columns: a block of no columns");
    out.push_back({Shape{x[0], w}, inputs[0].dtype});
  }
  return out;
}

void SplitColumns::forward(const StepContext& ctx) {
  std::int64_t column = 0;
  for (std::size_t k = 0; k < widths_.size(); ++k) {
    ctx.backend.copy_columns(ctx.inputs[0], column, ctx.outputs[k], 0, widths_[k],
                             GradMode::kOverwrite);
    column += widths_[k];
  }
}

void SplitColumns::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  std::int64_t column = 0;
  for (std::size_t k = 0; k < widths_.size(); ++k) {
    ctx.backend.copy_columns(ctx.output_grads[k], 0, ctx.input_grads[0], column, widths_[k],
                             ctx.input_grad_modes[0]);
    column += widths_[k];
  }
}

}  // namespace dlbench::nn
