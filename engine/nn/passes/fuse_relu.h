// Op -> ReLU becomes one op with a ReLU epilogue, so the ReLU's read and write of the
// activation disappear in forward and backward:
//   fuse_matmul_relu: Linear -> ReLU (oneDNN's post-op, cuBLASLt's RELU_BIAS);
//   fuse_conv_relu:   Convolution -> ReLU (oneDNN's post-op; on CUDA cuBLASLt's epilogue, or one
//                     bias+ReLU pass after cuDNN);
//   fuse_bn_relu:     BatchNorm -> ReLU (the ReLU and its bit mask in batch norm's own kernels).
// Rewritten only where the op's output has no other reader and is not a marked output (the
// pre-activation value is gone afterwards), and where the backend supports the epilogue
// (Layer::relu_epilogue says what to ask).
#pragma once

#include "engine/backend/op_support.h"
#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

class FuseRelu final : public GraphPass {
 public:
  // Folds ReLUs into the layers whose epilogue op is `op` (kMatmulForward, kConvForward,
  // kBatchNormTraining).
  FuseRelu(const char* name, backend::OpKind op) : name_(name), op_(op) {}
  const char* name() const override { return name_; }
  int run(Graph& graph, const PassContext& context) const override;

 private:
  const char* name_;
  backend::OpKind op_;
};

}  // namespace dlbench::nn
