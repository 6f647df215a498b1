// Inference's Conv2d -> BatchNorm becomes one convolution: the batch norm's running statistics
// and affine parameters are folded once into the convolution's weights and bias (Conv2d::
// fold_batch_norm, Backend::batch_norm_fold), so its pass over the activation disappears, and a
// ReLU after it then becomes the convolution's epilogue (fuse_conv_relu). Training normalizes
// with batch statistics and is left alone. Rewritten where the convolution's output has no other
// reader and the backend supports the fold and the convolution with a bias; a batch norm that
// took a residual tail (fuse_bn_add_relu, which runs first) stays.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FoldConvBatchNorm final : public GraphPass {
 public:
  const char* name() const override { return "fold_conv_bn"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
