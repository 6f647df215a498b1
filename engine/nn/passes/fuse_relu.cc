#include "engine/nn/passes/fuse_relu.h"

#include <map>

#include "engine/nn/layers/relu.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FuseRelu::run(Graph& graph, const PassContext& context) const {
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  std::map<std::size_t, Absorption> absorptions;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (dynamic_cast<const Relu*>(nodes[i].layer.get()) == nullptr) continue;
    const ValueId x = nodes[i].inputs[0];
    const int j = producer[static_cast<std::size_t>(x)];
    if (j < 0) continue;
    const std::optional<ReluEpilogue> epilogue =
        nodes[static_cast<std::size_t>(j)].layer->relu_epilogue();
    if (!epilogue || epilogue->op != op_) continue;
    if (!context.backend.supports(epilogue->op, epilogue->params, graph.value(x).dtype)) continue;
    absorptions[static_cast<std::size_t>(j)] = {{i}, {}, nodes[i].output(), {}};
  }
  if (!absorptions.empty())
    graph = rebuilt(graph, absorptions,
                    [&](std::size_t, Layer& layer) { layer.fuse_relu(context.mode); });
  return static_cast<int>(absorptions.size());
}

}  // namespace dlbench::nn
