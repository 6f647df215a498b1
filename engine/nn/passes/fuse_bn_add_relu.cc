#include "engine/nn/passes/fuse_bn_add_relu.h"

#include <map>

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FuseBatchNormAddRelu::run(Graph& graph, const PassContext& context) const {
  if (normalized_residual_ && context.mode != Mode::kTrain) return 0;
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  // The batch norm writing v alone, or null.
  auto batch_norm_of = [&](ValueId v, std::size_t& at) -> const BatchNorm* {
    const int i = producer[static_cast<std::size_t>(v)];
    if (i < 0) return nullptr;
    at = static_cast<std::size_t>(i);
    return dynamic_cast<const BatchNorm*>(nodes[at].layer.get());
  };
  std::map<std::size_t, Absorption> absorptions;
  for (std::size_t relu = 0; relu < nodes.size(); ++relu) {
    if (dynamic_cast<const Relu*>(nodes[relu].layer.get()) == nullptr) continue;
    const int add = producer[static_cast<std::size_t>(nodes[relu].inputs[0])];
    if (add < 0 ||
        dynamic_cast<const Add*>(nodes[static_cast<std::size_t>(add)].layer.get()) == nullptr)
      continue;
    const std::vector<ValueId>& sum = nodes[static_cast<std::size_t>(add)].inputs;
    for (std::size_t side = 0; side < 2; ++side) {
      std::size_t bn = 0, other = 0;
      const BatchNorm* layer = batch_norm_of(sum[side], bn);
      if (layer == nullptr || absorptions.count(bn) != 0) continue;
      const ValueId shortcut = sum[1 - side];
      std::optional<ReluEpilogue> tail;
      Absorption a{{static_cast<std::size_t>(add), relu}, {shortcut}, nodes[relu].output(), {}};
      if (normalized_residual_) {
        const BatchNorm* residual = batch_norm_of(shortcut, other);
        if (residual == nullptr || other == bn || absorptions.count(other) != 0) continue;
        tail = layer->normalized_residual_relu_epilogue(*residual);
        // The shortcut's batch norm leaves too: its input is the tail's second input now.
        a.absorbed.insert(a.absorbed.begin(), other);
        a.extra_inputs = {nodes[other].inputs[0]};
      } else {
        tail = layer->residual_relu_epilogue();
      }
      if (!tail || !context.backend.supports(tail->op, tail->params, graph.value(sum[side]).dtype))
        continue;
      absorptions[bn] = a;
      break;
    }
  }
  if (!absorptions.empty())
    graph = rebuilt(graph, absorptions, [&](std::size_t, Layer& layer) {
      auto& bn = static_cast<BatchNorm&>(layer);
      if (normalized_residual_)
        bn.fuse_normalized_residual_relu(context.mode);
      else
        bn.fuse_residual_relu(context.mode);
    });
  return static_cast<int>(absorptions.size());
}

}  // namespace dlbench::nn
