// Training's Convolution -> BatchNorm: the convolution also writes the batch norm's statistics (the
// sums of its output and of their squares per channel, Convolution::produce_statistics) and the
// batch norm takes them as a last input (BatchNorm::take_statistics), so that its forward reads the
// activation once, to normalize it, instead of twice. On CUDA the sums come from the
// convolution's own cuDNN graph where that measured faster than a statistics pass of ours
// (Backend::conv_forward). Inference folds batch norms away instead (fold_conv_bn) and is left
// alone. Rewritten where the convolution's output has no other reader and the backend supports
// both ops with statistics. A batch norm that also normalizes its residual (fuse_dual_bn_add_relu)
// takes the sums of both its inputs' convolutions, or none. Counted per convolution.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseConvBatchNormStatistics final : public GraphPass {
 public:
  const char* name() const override { return "fuse_conv_bn_stats"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
