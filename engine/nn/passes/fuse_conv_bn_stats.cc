#include "engine/nn/passes/fuse_conv_bn_stats.h"

#include <map>

#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/convolution.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FuseConvBatchNormStatistics::run(Graph& graph, const PassContext& context) const {
  if (context.mode != Mode::kTrain) return 0;
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  // Both ends of each link change: the convolution gains an output, the batch norm an input.
  std::map<std::size_t, Absorption> changes;
  // The convolution writing v alone where it can write statistics too, or -1.
  auto statistics_writer = [&](ValueId v) {
    const int j = producer[static_cast<std::size_t>(v)];
    if (j < 0) return -1;
    const auto* layer =
        dynamic_cast<const Convolution*>(nodes[static_cast<std::size_t>(j)].layer.get());
    if (layer == nullptr) return -1;
    const std::optional<backend::ConvParams> op = layer->statistics_forward();
    const bool can =
        op && context.backend.supports(backend::OpKind::kConvForward, *op, graph.value(v).dtype);
    return can ? j : -1;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto* bn = dynamic_cast<const BatchNorm*>(nodes[i].layer.get());
    if (bn == nullptr || bn->batch_norm_params().statistics) continue;
    // A batch norm that also normalizes its residual needs both sums handed over.
    const std::size_t normalized = bn->batch_norm_params().residual_norm ? 2 : 1;
    std::vector<std::size_t> convs;
    for (std::size_t k = 0; k < normalized; ++k)
      if (const int j = statistics_writer(nodes[i].inputs[k]); j >= 0)
        convs.push_back(static_cast<std::size_t>(j));
    if (convs.size() != normalized ||
        !context.backend.supports(backend::OpKind::kBatchNormTraining, bn->statistics_forward(),
                                  graph.value(nodes[i].inputs[0]).dtype))
      continue;
    Absorption takes;
    for (std::size_t conv : convs) {
      changes[conv] = {};
      takes.added_inputs.push_back({conv, 1});  // the convolution's second output: the sums
    }
    changes[i] = takes;
  }
  if (!changes.empty())
    graph = rebuilt(graph, changes, [&](std::size_t, Layer& layer) {
      if (auto* conv = dynamic_cast<Convolution*>(&layer))
        conv->produce_statistics();
      else
        static_cast<BatchNorm&>(layer).take_statistics();
    });
  // Each convolution that writes statistics counts once.
  int rewrites = 0;
  for (const auto& [node, change] : changes) rewrites += change.added_inputs.empty() ? 1 : 0;
  return rewrites;
}

}  // namespace dlbench::nn
