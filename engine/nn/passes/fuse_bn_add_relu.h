// The residual block's tail, BatchNorm -> Add (with the shortcut) -> ReLU, becomes one batch
// norm with the shortcut as a second input: y = relu(bn(x) + shortcut). Forward reads x twice
// and the shortcut once and writes y once (unfused: three more passes over the activation), and
// backward reads the ReLU's bit mask instead of running the ReLU's and the add's backward.
// Rewritten where the batch norm's and the add's outputs have no other reader, and where the
// backend supports the tail. When both of the add's inputs are batch norms (a downsampling
// block), the first one takes the tail and the other's output is the shortcut.
//
// fuse_dual_bn_add_relu (training; it runs first) takes that other batch norm in as well:
// y = relu(bn(x) + bn'(r)) in one op, which normalizes r on the fly instead of writing bn'(r)
// and reading it back, and in backward sums both batch norms' gradients in one read of dy. For
// inference the shortcut's batch norm folds into its convolution instead (fold_conv_bn).
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseBatchNormAddRelu final : public GraphPass {
 public:
  // normalized_residual: the dual form, where the shortcut's batch norm joins the tail.
  explicit FuseBatchNormAddRelu(bool normalized_residual = false)
      : normalized_residual_(normalized_residual) {}
  const char* name() const override {
    return normalized_residual_ ? "fuse_dual_bn_add_relu" : "fuse_bn_add_relu";
  }
  int run(Graph& graph, const PassContext& context) const override;

 private:
  bool normalized_residual_;
};

}  // namespace dlbench::nn
