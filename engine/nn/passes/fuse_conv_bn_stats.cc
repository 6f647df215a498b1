#include "engine/nn/passes/fuse_conv_bn_stats.h"

#include <map>

#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/conv2d.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FuseConvBatchNormStatistics::run(Graph& graph, const PassContext& context) const {
  if (context.mode != Mode::kTrain) return 0;
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  // Both ends of each link change: the convolution gains an output, the batch norm an input.
  std::map<std::size_t, Absorption> changes;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto* bn = dynamic_cast<const BatchNorm*>(nodes[i].layer.get());
    if (bn == nullptr || bn->batch_norm_params().statistics) continue;
    const ValueId x = nodes[i].inputs[0];
    const int j = producer[static_cast<std::size_t>(x)];
    if (j < 0) continue;
    const auto conv = static_cast<std::size_t>(j);
    const auto* layer = dynamic_cast<const Conv2d*>(nodes[conv].layer.get());
    if (layer == nullptr) continue;
    const std::optional<backend::Conv2dParams> op = layer->statistics_forward();
    const DType dtype = graph.value(x).dtype;
    if (!op || !context.backend.supports(backend::OpKind::kConv2dForward, *op, dtype) ||
        !context.backend.supports(backend::OpKind::kBatchNormTraining, bn->statistics_forward(),
                                  dtype))
      continue;
    changes[conv] = {};
    Absorption takes;
    takes.added_inputs = {{conv, 1}};  // the convolution's second output: the statistics
    changes[i] = takes;
  }
  if (!changes.empty())
    graph = rebuilt(graph, changes, [&](std::size_t, Layer& layer) {
      if (auto* conv = dynamic_cast<Conv2d*>(&layer))
        conv->produce_statistics();
      else
        static_cast<BatchNorm&>(layer).take_statistics();
    });
  return static_cast<int>(changes.size() / 2);
}

}  // namespace dlbench::nn
