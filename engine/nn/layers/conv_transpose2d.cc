#include "engine/nn/layers/conv_transpose2d.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"
#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

ConvTranspose2d::ConvTranspose2d(const backend::Conv2dParams& conv) : conv_(conv) {
  DLBENCH_CHECK(!conv.bias && !conv.residual && !conv.statistics &&
                    conv.activation == backend::Activation::kNone,
                "conv_transpose2d: a plain convolution describes it (no bias, residual, "
                "statistics or activation)");
  DLBENCH_CHECK(conv.out_h() > 0 && conv.out_w() > 0,
                "conv_transpose2d: the convolution it transposes has an empty output");
}

backend::Conv2dParams ConvTranspose2d::upsampling(std::int64_t n, std::int64_t h, std::int64_t w,
                                                  std::int64_t in_channels,
                                                  std::int64_t out_channels, int kernel,
                                                  int stride) {
  DLBENCH_CHECK(
      n > 0 && h > 0 && w > 0 && in_channels > 0 && out_channels > 0 && kernel > 0 && stride > 0,
      "conv_transpose2d: sizes, kernel and stride must be positive");
  backend::Conv2dParams p;
  p.n = n, p.c = out_channels, p.k = in_channels, p.r = p.s = kernel;
  p.stride_h = p.stride_w = stride;
  // The convolution reads the transposed layer's output: (h - 1) * stride + kernel rows give
  // back h rows at that stride.
  p.h = (h - 1) * stride + kernel, p.w = (w - 1) * stride + kernel;
  return p;
}

Shape ConvTranspose2d::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], conv_.output_shape(), "conv_transpose2d");
  return conv_.input_shape();
}

std::vector<ParamDecl> ConvTranspose2d::params() const {
  // Fan-in of an output element: the input channels times the kernel taps that reach it
  // (kernel area / stride area; one tap each for U-Net's 2x2 at stride 2).
  const std::int64_t taps = std::max<std::int64_t>(
      1, conv_.r * conv_.s / (std::int64_t{conv_.stride_h} * conv_.stride_w));
  return {
      {"weight", conv_.weight_shape(), Init::kKaimingNormal, conv_.k * taps, ParamGroup::kDecayed}};
}

void ConvTranspose2d::forward(const StepContext& ctx) {
  ctx.backend.conv2d_backward_data(conv_, ctx.inputs[0], ctx.params[0], ctx.output(),
                                   GradMode::kOverwrite);
}

void ConvTranspose2d::backward(const StepContext& ctx) {
  ctx.backend.conv2d_backward_weights(conv_, ctx.output_grad(), ctx.inputs[0], ctx.param_grads[0],
                                      Tensor(), ctx.param_grad_modes[0]);
  if (!ctx.input_grads[0].defined()) return;
  // conv2d_forward overwrites its output: a second reader of this input would have written its
  // gradient there first.
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "conv_transpose2d: its input feeds another layer as well, and adding to that "
                "layer's gradient is not supported");
  ctx.backend.conv2d_forward(conv_, ctx.output_grad(), ctx.params[0], Tensor(), ctx.input_grads[0],
                             Tensor(), Tensor());
}

}  // namespace dlbench::nn
