// Inference's Convolution -> BatchNorm becomes one convolution: the batch norm's running statistics
// and affine parameters are folded once into the convolution's weights and bias (Convolution::
// fold_batch_norm, Backend::batch_norm_fold), so its pass over the activation disappears. A
// residual tail the batch norm took (fuse_bn_add_relu, which runs first) becomes the
// convolution's epilogue with the shortcut as its second input, y = relu(conv + b + shortcut);
// a ReLU after a plain batch norm becomes the epilogue in the next pass (fuse_conv_relu).
// Training normalizes with batch statistics and is left alone. Rewritten where the convolution's
// output has no other reader and the backend supports the fold and the convolution's epilogue.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FoldConvBatchNorm final : public GraphPass {
 public:
  const char* name() const override { return "fold_conv_bn"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
