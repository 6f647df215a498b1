#include <memory>

#include "engine/core/error.h"
#include "engine/nn/passes/fold_conv_bn.h"
#include "engine/nn/passes/fuse_bn_add_relu.h"
#include "engine/nn/passes/fuse_conv_bn_stats.h"
#include "engine/nn/passes/fuse_feed_forward.h"
#include "engine/nn/passes/fuse_relu.h"
#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

const char* to_string(Fusion fusion) {
  return fusion == Fusion::kOn ? "on" : "off";
}

Fusion parse_fusion(const std::string& text) {
  if (text == "on") return Fusion::kOn;
  if (text == "off") return Fusion::kOff;
  throw Error(ErrorKind::kUsage, "fusion must be on or off, not '" + text + "'",
              "fusion on (the default) rewrites the graph; off runs it as the model built it");
}

int PassReport::total() const {
  int n = 0;
  for (const auto& [name, count] : rewrites) n += count;
  return n;
}

PassReport apply_passes(Graph& graph, const PassContext& context, Fusion fusion) {
  PassReport report;
  if (fusion == Fusion::kOff) return report;
  // The largest pattern first: a batch norm that took a residual tail is offered nothing else;
  // in training a downsampling tail also takes the shortcut's batch norm. Inference folds the other
  // batch norms into their convolutions before a ReLU is offered to them, so that the ReLU becomes
  // the convolution's epilogue. Training's batch norms take their statistics from the convolution
  // before them once their tails are settled.
  const std::unique_ptr<GraphPass> passes[] = {
      std::make_unique<FuseBatchNormAddRelu>(true),
      std::make_unique<FuseBatchNormAddRelu>(),
      std::make_unique<FoldConvBatchNorm>(),
      std::make_unique<FuseRelu>("fuse_bn_relu", backend::OpKind::kBatchNormTraining),
      std::make_unique<FuseRelu>("fuse_matmul_relu", backend::OpKind::kMatmulForward),
      std::make_unique<FuseFeedForward>(),
      std::make_unique<FuseRelu>("fuse_conv_relu", backend::OpKind::kConvForward),
      std::make_unique<FuseConvBatchNormStatistics>()};
  for (const auto& pass : passes)
    report.rewrites.emplace_back(pass->name(), pass->run(graph, context));
  return report;
}

}  // namespace dlbench::nn
