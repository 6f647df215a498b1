// What several layers' forward and backward share: shape checks, flat views and the gradient
// modes they pass to the backend.
#pragma once

#include <cstdint>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// An internal error when a layer is given an input of another shape than it was built for.
void expect_shape(const Shape& got, const Shape& want, const char* layer);
// t viewed as [rows, numel / rows].
Tensor flat(const Tensor& t, std::int64_t rows);
// A layer's state buffer (f32 words) seen as a tensor of another shape and dtype that fits in it.
Tensor state_as(const Tensor& state, Shape shape, DType dtype);
// ... as `words` i32 words: a bit mask's storage.
Tensor as_i32(const Tensor& state, std::int64_t words);
// A loss's i32 labels shaped as its scores [..., classes] without their last axis, or an
// error naming the loss.
void expect_labels_of(const Shape& scores, const ValueInfo& labels, const char* loss);
// Gradients that flow unchanged (residual add) are copied or accumulated.
void pass_gradient(backend::Backend& be, const Tensor& dy, const Tensor& dx, GradMode mode);
// The backend writes a layer's weight and bias gradients in one mode. Where they differ (a
// shared weight beside a bias of its own), the overwritten ones are zeroed and all accumulate.
GradMode one_param_grad_mode(const StepContext& ctx);

// Layer::relu_epilogue of a layer whose forward op takes `p`: that op with a ReLU epilogue, or
// nullopt when it has one already.
template <class OpParams>
std::optional<ReluEpilogue> with_relu_epilogue(backend::OpKind op, OpParams p) {
  if (p.activation != backend::Activation::kNone) return std::nullopt;
  p.activation = backend::Activation::kRelu;
  return ReluEpilogue{op, p};
}

// Where a layer's forward ran with a ReLU epilogue, its backward starts here: the output
// gradient (this node is its only reader) becomes the pre-activation's gradient in place, as
// the unfused ReLU's backward would have written it, and where the op has a bias its gradient
// (dbias, under `mode`) is summed in the same pass, so the weights' backward need not read the
// gradient once more. Returns the op's parameters as the backward ops then take them: without
// the epilogue, and without the bias when its gradient is done.
template <class OpParams>
OpParams backward_through_epilogue(const StepContext& ctx, OpParams p, const Tensor& dbias,
                                   GradMode mode) {
  if (p.activation == backend::Activation::kNone) return p;
  ctx.backend.activation_backward(backend::Activation::kRelu, ctx.output(), ctx.output_grad(),
                                  ctx.output_grad(), GradMode::kOverwrite,
                                  p.bias ? dbias : Tensor(), mode);
  p.activation = backend::Activation::kNone;
  p.bias = false;
  return p;
}

}  // namespace dlbench::nn
