#include "engine/nn/layers/layer_helpers.h"

#include <algorithm>
#include <string>

namespace dlbench::nn {

void expect_shape(const Shape& got, const Shape& want, const char* layer) {
  if (!(got == want))
    throw Error(ErrorKind::kInternal, std::string(layer) + ": input shape " + got.str() +
                                          " does not match the layer's " + want.str());
}

void expect_labels_of(const Shape& scores, const ValueInfo& labels, const char* loss) {
  const int rank = scores.rank();
  bool leading_match = labels.shape.rank() == rank - 1;
  for (int d = 0; leading_match && d < rank - 1; ++d) leading_match = labels.shape[d] == scores[d];
  DLBENCH_CHECK(labels.dtype == DType::kI32 && leading_match,
                std::string(loss) +
                    ": labels must be i32, shaped as the scores without their "
                    "last axis");
}

Tensor flat(const Tensor& t, std::int64_t rows) {
  return t.reshaped({rows, t.numel() / rows});
}

Tensor state_as(const Tensor& state, Shape shape, DType dtype) {
  DLBENCH_CHECK(state.bytes() >= checked_bytes(shape, dtype), "the state holds the tensor");
  return Tensor(state.data(), std::move(shape), dtype, state.device());
}

Tensor as_i32(const Tensor& state, std::int64_t words) {
  return state_as(state, {words}, DType::kI32);
}

void pass_gradient(backend::Backend& be, const Tensor& dy, const Tensor& dx, GradMode mode) {
  if (!dx.defined()) return;
  if (mode == GradMode::kOverwrite)
    be.copy(dy, dx);
  else
    be.accumulate(dy, dx);
}

GradMode one_param_grad_mode(const StepContext& ctx) {
  const auto& modes = ctx.param_grad_modes;
  if (std::all_of(modes.begin(), modes.end(), [&](GradMode m) { return m == modes[0]; }))
    return modes.empty() ? GradMode::kOverwrite : modes[0];
  for (std::size_t i = 0; i < modes.size(); ++i)
    if (modes[i] == GradMode::kOverwrite) ctx.backend.fill(ctx.param_grads[i], 0.0f);
  return GradMode::kAccumulate;
}

}  // namespace dlbench::nn
