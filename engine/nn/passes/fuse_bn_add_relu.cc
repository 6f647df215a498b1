#include "engine/nn/passes/fuse_bn_add_relu.h"

#include <map>

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FuseBatchNormAddRelu::run(Graph& graph, const PassContext& context) const {
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  auto sole_producer = [&](ValueId v) { return producer[static_cast<std::size_t>(v)]; };
  std::map<std::size_t, Absorption> absorptions;
  for (std::size_t relu = 0; relu < nodes.size(); ++relu) {
    if (dynamic_cast<const Relu*>(nodes[relu].layer.get()) == nullptr) continue;
    const int add = sole_producer(nodes[relu].inputs[0]);
    if (add < 0 ||
        dynamic_cast<const Add*>(nodes[static_cast<std::size_t>(add)].layer.get()) == nullptr)
      continue;
    const std::vector<ValueId>& sum = nodes[static_cast<std::size_t>(add)].inputs;
    for (int side = 0; side < 2; ++side) {
      const int bn = sole_producer(sum[static_cast<std::size_t>(side)]);
      if (bn < 0 || absorptions.count(static_cast<std::size_t>(bn)) != 0) continue;
      const auto* layer =
          dynamic_cast<const BatchNorm*>(nodes[static_cast<std::size_t>(bn)].layer.get());
      if (layer == nullptr) continue;
      const std::optional<ReluEpilogue> tail = layer->residual_relu_epilogue();
      if (!tail ||
          !context.backend.supports(tail->op, tail->params,
                                    graph.value(sum[static_cast<std::size_t>(side)]).dtype))
        continue;
      absorptions[static_cast<std::size_t>(bn)] = {{static_cast<std::size_t>(add), relu},
                                                   {sum[static_cast<std::size_t>(1 - side)]},
                                                   nodes[relu].output(),
                                                   {}};
      break;
    }
  }
  if (!absorptions.empty())
    graph = rebuilt(graph, absorptions, [&](std::size_t, Layer& layer) {
      static_cast<BatchNorm&>(layer).fuse_residual_relu(context.mode);
    });
  return static_cast<int>(absorptions.size());
}

}  // namespace dlbench::nn
