#include "engine/nn/layers/row_dots.h"

namespace dlbench::nn {

std::vector<OutputInfo> RowDots::outputs(std::span<const ValueInfo> inputs) const {
  const Shape rows{n_, d_}, candidates{n_ * m_, d_};
  const bool fits = inputs[0].shape == rows && inputs[1].shape == candidates &&
                    inputs[0].dtype == inputs[1].dtype;
  DLBENCH_CHECK(fits, "row_dots: inputs " + inputs[0].shape.str() + " and " +
                          inputs[1].shape.str() + " are not " + rows.str() + " and " +
                          candidates.str() + " of one dtype");
  return {{Shape{n_ * m_, 1}, inputs[0].dtype}};
}

void RowDots::forward(const StepContext& ctx) {
  ctx.backend.row_dots_forward(ctx.inputs[0], ctx.inputs[1], ctx.output().reshaped({n_, m_}));
}

void RowDots::backward(const StepContext& ctx) {
  ctx.backend.row_dots_backward(ctx.inputs[0], ctx.inputs[1], ctx.output_grad().reshaped({n_, m_}),
                                ctx.input_grads[0], ctx.input_grad_modes[0], ctx.input_grads[1],
                                ctx.input_grad_modes[1]);
}

}  // namespace dlbench::nn
