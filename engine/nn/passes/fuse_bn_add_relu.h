// The residual block's tail, BatchNorm -> Add (with the shortcut) -> ReLU, becomes one batch
// norm with the shortcut as a second input: y = relu(bn(x) + shortcut). Forward reads x twice
// and the shortcut once and writes y once (unfused: three more passes over the activation), and
// backward reads the ReLU's bit mask instead of running the ReLU's and the add's backward.
// Rewritten where the batch norm's and the add's outputs have no other reader, and where the
// backend supports the tail. When both of the add's inputs are batch norms (a downsampling
// block), the first one takes the tail and the other's output is the shortcut.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseBatchNormAddRelu final : public GraphPass {
 public:
  const char* name() const override { return "fuse_bn_add_relu"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
