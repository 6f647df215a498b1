#include "engine/nn/passes/fuse_relu.h"

#include <map>

#include "engine/nn/layers/relu.h"

namespace dlbench::nn {
namespace {

// How many nodes read each value; a marked output counts as a reader too.
std::vector<int> readers(const Graph& g) {
  std::vector<int> count(g.values().size(), 0);
  for (const Node& n : g.nodes())
    for (ValueId v : n.inputs) ++count[static_cast<std::size_t>(v)];
  for (ValueId v : g.outputs()) ++count[static_cast<std::size_t>(v)];
  return count;
}

// The graph again, node by node, with each fused ReLU left out and the layer before it carrying
// the epilogue. Inputs and parameters keep their order and names, so the parameter store lays the
// weights out (and seeds them) exactly as for the unfused graph.
Graph rebuilt(Graph& old, const std::map<std::size_t, std::size_t>& relu_of_op) {
  Graph g(old.compute_dtype());
  std::vector<ValueId> map(old.values().size(), -1);
  for (std::size_t i = 0; i < old.inputs().size(); ++i)
    map[static_cast<std::size_t>(old.inputs()[i])] = g.add_input(old.input_specs()[i]);
  for (const ParamInfo& p : old.params()) g.add_parameter(p.name, p.decl);
  std::vector<bool> dropped(old.nodes().size(), false);
  for (const auto& [op, relu] : relu_of_op) dropped[relu] = true;
  for (std::size_t i = 0; i < old.nodes().size(); ++i) {
    if (dropped[i]) continue;
    Node& n = old.nodes()[i];
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) inputs.push_back(map[static_cast<std::size_t>(v)]);
    std::string name = n.name;
    const auto fused = relu_of_op.find(i);
    if (fused != relu_of_op.end()) {
      n.layer->fuse_relu();
      name += "+" + old.nodes()[fused->second].name;
    }
    // add() names its one output as the node; add_multi() numbers them: keep the old names.
    const bool single = n.outputs.size() == 1 && old.value(n.outputs[0]).name == n.name;
    const std::vector<ValueId> outs =
        single ? std::vector<ValueId>{g.add(name, std::move(n.layer), std::move(inputs), n.params)}
               : g.add_multi(name, std::move(n.layer), std::move(inputs), n.params);
    for (std::size_t k = 0; k < outs.size(); ++k)
      map[static_cast<std::size_t>(n.outputs[k])] = outs[k];
    if (fused != relu_of_op.end())
      map[static_cast<std::size_t>(old.nodes()[fused->second].output())] = outs[0];
  }
  for (ValueId v : old.outputs()) g.mark_output(map[static_cast<std::size_t>(v)]);
  return g;
}

}  // namespace

int FuseRelu::run(Graph& graph, const PassContext& context) const {
  const std::vector<int> read = readers(graph);
  const std::vector<Node>& nodes = graph.nodes();
  std::vector<int> producer(graph.values().size(), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (ValueId v : nodes[i].outputs) producer[static_cast<std::size_t>(v)] = static_cast<int>(i);
  std::map<std::size_t, std::size_t> relu_of_op;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (dynamic_cast<const Relu*>(nodes[i].layer.get()) == nullptr) continue;
    const ValueId x = nodes[i].inputs[0];
    const int j = producer[static_cast<std::size_t>(x)];
    if (j < 0 || read[static_cast<std::size_t>(x)] != 1) continue;
    const std::optional<ReluEpilogue> epilogue =
        nodes[static_cast<std::size_t>(j)].layer->relu_epilogue();
    if (!epilogue || epilogue->op != op_) continue;
    if (!context.backend.supports(epilogue->op, epilogue->params, graph.value(x).dtype)) continue;
    relu_of_op[static_cast<std::size_t>(j)] = i;
  }
  if (!relu_of_op.empty()) graph = rebuilt(graph, relu_of_op);
  return static_cast<int>(relu_of_op.size());
}

}  // namespace dlbench::nn
