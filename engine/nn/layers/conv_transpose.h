// ConvTranspose: the upsampling convolution of U-Net's decoder (2D and 3D), built from the
// convolution ops every backend has (no op of its own).
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// The gradient of a convolution with respect to its input, used as a layer: y = conv^T(x, W).
// It is described by that convolution (`conv`, which maps y's shape to x's): x is NHWC
// [n, conv.out_h(), conv.out_w(), conv.k], y is [n, conv.h, conv.w, conv.c], W is [conv.k,
// conv.r, conv.s, conv.c] (KRSC of the convolution: the transposed layer's input channels
// first, as PyTorch's ConvTranspose weight [in, out, kh, kw]). So
//   forward:          y   = conv_backward_data(x, W)
//   input gradient:   dx  = conv_forward(dy, W)
//   weight gradient:  dW  = conv_backward_weights(dy, x)   (dy in the convolution's x role)
// and each runs on whatever route the backend measured fastest for that convolution (on CUDA,
// cuDNN's backward-data as this forward). No bias: U-Net follows every transposed convolution
// with a convolution and a batch norm, which take out a constant per channel.
class ConvTranspose final : public Layer {
 public:
  explicit ConvTranspose(const backend::ConvParams& conv);
  // The usual way to name one: an NHWC (or NDHWC) input upsampled by `stride` with a cubic
  // `kernel` and no padding (U-Net's 2x2 at stride 2 doubles every side).
  static backend::ConvParams upsampling(const Shape& input, std::int64_t out_channels, int kernel,
                                        int stride);
  const char* kind() const override {
    return conv_.volumetric() ? "conv_transpose3d" : "conv_transpose2d";
  }
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<ParamDecl> params() const override;
  SavedForBackward saved_for_backward() const override { return {{0}, {}}; }
  std::int64_t forward_macs() const override { return conv_.macs(); }
  std::int64_t backward_macs(bool skip_input_grad) const override {
    return conv_.macs() * (skip_input_grad ? 1 : 2);
  }
  void set_math(backend::MathMode math) override { conv_.math = math; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::ConvParams conv_;
};

}  // namespace dlbench::nn
