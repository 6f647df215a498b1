#include "engine/nn/layers/conv_transpose.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"
#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

ConvTranspose::ConvTranspose(const backend::ConvParams& conv) : conv_(conv) {
  DLBENCH_CHECK(!conv.bias && !conv.residual && !conv.statistics &&
                    conv.activation == backend::Activation::kNone,
                "conv_transpose: a plain convolution describes it (no bias, residual, "
                "statistics or activation)");
  DLBENCH_CHECK(conv.out_d() > 0 && conv.out_h() > 0 && conv.out_w() > 0,
                "conv_transpose: the convolution it transposes has an empty output");
}

backend::ConvParams ConvTranspose::upsampling(const Shape& input, std::int64_t out_channels,
                                              int kernel, int stride) {
  DLBENCH_CHECK(input.rank() == 4 || input.rank() == 5,
                "conv_transpose: the input must be NHWC or NDHWC");
  DLBENCH_CHECK(input.numel() > 0 && out_channels > 0 && kernel > 0 && stride > 0,
                "conv_transpose: sizes, kernel and stride must be positive");
  backend::ConvParams p;
  const bool volumetric = input.rank() == 5;
  // The convolution reads the transposed layer's output: (h - 1) * stride + kernel rows give
  // back h rows at that stride.
  auto grown = [&](std::int64_t side) { return (side - 1) * stride + kernel; };
  p.spatial_dims = volumetric ? 3 : 2;
  p.n = input[0], p.c = out_channels, p.k = input[input.rank() - 1];
  if (volumetric) p.d = grown(input[1]), p.t = kernel, p.stride_d = stride;
  p.h = grown(input[input.rank() - 3]), p.w = grown(input[input.rank() - 2]);
  p.r = p.s = kernel;
  p.stride_h = p.stride_w = stride;
  return p;
}

Shape ConvTranspose::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], conv_.output_shape(), kind());
  return conv_.input_shape();
}

std::vector<ParamDecl> ConvTranspose::params() const {
  // Fan-in of an output element: the input channels times the kernel taps that reach it
  // (kernel area / stride area; one tap each for U-Net's 2x2 at stride 2).
  const std::int64_t taps = std::max<std::int64_t>(
      1, conv_.taps() / (std::int64_t{conv_.stride_d} * conv_.stride_h * conv_.stride_w));
  return {
      {"weight", conv_.weight_shape(), Init::kKaimingNormal, conv_.k * taps, ParamGroup::kDecayed}};
}

void ConvTranspose::forward(const StepContext& ctx) {
  ctx.backend.conv_backward_data(conv_, ctx.inputs[0], ctx.params[0], ctx.output(),
                                 GradMode::kOverwrite);
}

void ConvTranspose::backward(const StepContext& ctx) {
  ctx.backend.conv_backward_weights(conv_, ctx.output_grad(), ctx.inputs[0], ctx.param_grads[0],
                                    Tensor(), ctx.param_grad_modes[0]);
  if (!ctx.input_grads[0].defined()) return;
  // conv_forward overwrites its output: a second reader of this input would have written its
  // gradient there first.
  DLBENCH_CHECK(ctx.input_grad_modes[0] == GradMode::kOverwrite,
                "conv_transpose: its input feeds another layer as well, and adding to that "
                "layer's gradient is not supported");
  ctx.backend.conv_forward(conv_, ctx.output_grad(), ctx.params[0], Tensor(), ctx.input_grads[0],
                           Tensor(), Tensor());
}

}  // namespace dlbench::nn
