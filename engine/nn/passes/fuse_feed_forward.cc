#include "engine/nn/passes/fuse_feed_forward.h"

#include <map>
#include <memory>
#include <set>

#include "engine/nn/layers/feed_forward.h"
#include "engine/nn/layers/gelu.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {
namespace {

const Linear* plain_linear(const Node& node) {
  const auto* linear = dynamic_cast<const Linear*>(node.layer.get());
  return linear != nullptr && !linear->fused_relu() ? linear : nullptr;
}

}  // namespace

int FuseFeedForward::run(Graph& graph, const PassContext& context) const {
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  std::map<std::size_t, Absorption> absorptions;
  // A node takes part in one block at most: in a chain linear, GELU, linear, GELU, linear the
  // middle linear ends the first block and cannot also start the second.
  std::set<std::size_t> taken;
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    const Linear* outer = plain_linear(nodes[j]);
    if (outer == nullptr) continue;
    const int g = producer[static_cast<std::size_t>(nodes[j].inputs[0])];
    if (g < 0 ||
        dynamic_cast<const Gelu*>(nodes[static_cast<std::size_t>(g)].layer.get()) == nullptr)
      continue;
    const ValueId pre = nodes[static_cast<std::size_t>(g)].inputs[0];
    const int i = producer[static_cast<std::size_t>(pre)];
    if (i < 0) continue;
    const Linear* inner = plain_linear(nodes[static_cast<std::size_t>(i)]);
    if (inner == nullptr) continue;
    backend::MatmulParams forward = inner->matmul(), backward = outer->matmul();
    forward.gelu = true, backward.gelu_gradient = true;
    const DType dtype = graph.value(pre).dtype;
    if (!context.backend.supports(backend::OpKind::kMatmulForward, forward, dtype)) continue;
    if (context.mode == Mode::kTrain &&
        !context.backend.supports(backend::OpKind::kMatmulBackwardData, backward, dtype))
      continue;
    const auto first = static_cast<std::size_t>(i), gelu = static_cast<std::size_t>(g);
    if (taken.count(first) > 0 || taken.count(gelu) > 0 || taken.count(j) > 0) continue;
    taken.insert({first, gelu, j});
    Absorption a{{gelu, j}, {}, nodes[j].output(), {}};
    a.replace = [i, j, mode = context.mode](Graph& old) -> std::unique_ptr<Layer> {
      return std::make_unique<FeedForward>(
          static_cast<const Linear&>(*old.nodes()[static_cast<std::size_t>(i)].layer),
          static_cast<const Linear&>(*old.nodes()[j].layer), mode);
    };
    absorptions[first] = std::move(a);
  }
  if (!absorptions.empty()) graph = rebuilt(graph, absorptions, [](std::size_t, Layer&) {});
  return static_cast<int>(absorptions.size());
}

}  // namespace dlbench::nn
