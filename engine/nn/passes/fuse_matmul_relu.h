// Linear -> ReLU becomes one Linear with a ReLU epilogue (oneDNN's post-op, cuBLASLt's
// RELU_BIAS): the ReLU's read and write of the activation disappear, in forward and backward.
// Rewritten only where the Linear's output has no other reader and is not a marked output (the
// pre-activation value is gone afterwards), and where the backend supports the epilogue.
#pragma once

#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseMatmulRelu final : public GraphPass {
 public:
  const char* name() const override { return "fuse_matmul_relu"; }
  int run(Graph& graph, const PassContext& context) const override;
};

}  // namespace dlbench::nn
