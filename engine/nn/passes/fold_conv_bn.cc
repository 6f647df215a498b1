#include "engine/nn/passes/fold_conv_bn.h"

#include <map>

#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/convolution.h"
#include "engine/nn/passes/rewrite.h"

namespace dlbench::nn {

int FoldConvBatchNorm::run(Graph& graph, const PassContext& context) const {
  if (context.mode != Mode::kInfer) return 0;
  const std::vector<int> producer = sole_producers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  std::map<std::size_t, Absorption> absorptions;
  struct Fold {
    backend::BatchNormParams bn;
    DType dtype;
  };
  std::map<std::size_t, Fold> folds;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto* bn = dynamic_cast<const BatchNorm*>(nodes[i].layer.get());
    if (bn == nullptr) continue;
    const ValueId x = nodes[i].inputs[0];
    const int j = producer[static_cast<std::size_t>(x)];
    if (j < 0) continue;
    const auto* conv =
        dynamic_cast<const Convolution*>(nodes[static_cast<std::size_t>(j)].layer.get());
    if (conv == nullptr) continue;
    const backend::BatchNormParams& params = bn->batch_norm_params();
    const std::optional<backend::ConvParams> op = conv->folded_forward(params);
    const DType dtype = graph.value(x).dtype;
    if (!op ||
        !context.backend.supports(backend::OpKind::kBatchNormFold, params.without_tail(), dtype) ||
        !context.backend.supports(backend::OpKind::kConvForward, *op, dtype))
      continue;
    std::vector<ValueId> residual;
    if (params.residual) residual.push_back(nodes[i].inputs[1]);
    absorptions[static_cast<std::size_t>(j)] = {{i}, residual, nodes[i].output(), {}};
    folds[static_cast<std::size_t>(j)] = {params, dtype};
  }
  if (!absorptions.empty())
    graph = rebuilt(graph, absorptions, [&](std::size_t node, Layer& layer) {
      const Fold& fold = folds.at(node);
      static_cast<Convolution&>(layer).fold_batch_norm(fold.bn, fold.dtype);
    });
  return static_cast<int>(absorptions.size());
}

}  // namespace dlbench::nn
