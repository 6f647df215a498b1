#include "engine/nn/passes/rewrite.h"

#include <string>
#include <utility>

namespace dlbench::nn {

std::vector<int> sole_producers(const Graph& g) {
  std::vector<int> readers(g.values().size(), 0), producer(g.values().size(), -1);
  for (const Node& n : g.nodes())
    for (ValueId v : n.inputs) ++readers[static_cast<std::size_t>(v)];
  for (ValueId v : g.outputs()) ++readers[static_cast<std::size_t>(v)];
  for (std::size_t i = 0; i < g.nodes().size(); ++i)
    for (ValueId v : g.nodes()[i].outputs)
      if (readers[static_cast<std::size_t>(v)] == 1)
        producer[static_cast<std::size_t>(v)] = static_cast<int>(i);
  return producer;
}

Graph rebuilt(Graph& old, const std::map<std::size_t, Absorption>& absorptions,
              const std::function<void(std::size_t, Layer&)>& fuse) {
  Graph g(old.compute_dtype());
  std::vector<ValueId> map(old.values().size(), -1);
  std::map<std::size_t, std::vector<ValueId>> outputs_of;  // of nodes that gained outputs
  auto mapped = [&](ValueId v) { return map[static_cast<std::size_t>(v)]; };
  for (std::size_t i = 0; i < old.inputs().size(); ++i)
    map[static_cast<std::size_t>(old.inputs()[i])] = g.add_input(old.input_specs()[i]);
  for (const ParamInfo& p : old.params()) g.add_parameter(p.name, p.decl);
  // Which absorbing node is emitted in place of each absorbed node that comes last.
  std::vector<bool> dropped(old.nodes().size(), false);
  std::map<std::size_t, std::size_t> emit_at;
  for (const auto& [into, a] : absorptions) {
    std::size_t last = into;
    for (std::size_t k : a.absorbed) dropped[k] = true, last = std::max(last, k);
    emit_at[last] = into;
  }
  auto emit = [&](std::size_t i) {
    Node& n = old.nodes()[i];
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) inputs.push_back(mapped(v));
    std::string name = n.name;
    std::vector<ParamId> params = n.params;
    const auto a = absorptions.find(i);
    if (a != absorptions.end()) {
      if (a->second.replace) n.layer = a->second.replace(old);
      fuse(i, *n.layer);
      for (ValueId v : a->second.extra_inputs) inputs.push_back(mapped(v));
      for (const auto& [node, output] : a->second.added_inputs)
        inputs.push_back(outputs_of.at(node).at(output));
      for (std::size_t k : a->second.absorbed) {
        name += "+" + old.nodes()[k].name;
        params.insert(params.end(), old.nodes()[k].params.begin(), old.nodes()[k].params.end());
      }
    }
    // add() names its one output as the node; add_multi() numbers them: keep the old names
    // where the layer kept its one output.
    std::vector<ValueInfo> in;
    for (ValueId v : inputs) in.push_back(g.value(v));
    const bool grew = n.layer->outputs(in).size() > n.outputs.size();
    const bool single = !grew && n.outputs.size() == 1 && old.value(n.outputs[0]).name == n.name;
    const std::vector<ValueId> outs =
        single ? std::vector<ValueId>{g.add(name, std::move(n.layer), std::move(inputs), params)}
               : g.add_multi(name, std::move(n.layer), std::move(inputs), params);
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      map[static_cast<std::size_t>(n.outputs[k])] = outs[k];
    if (grew) outputs_of[i] = outs;
    if (a != absorptions.end() && a->second.result >= 0)
      map[static_cast<std::size_t>(a->second.result)] = outs[0];
  };
  for (std::size_t i = 0; i < old.nodes().size(); ++i) {
    const auto at = emit_at.find(i);
    if (at != emit_at.end())
      emit(at->second);
    else if (!dropped[i] && absorptions.count(i) == 0)
      emit(i);
  }
  for (ValueId v : old.outputs()) g.mark_output(mapped(v));
  return g;
}

}  // namespace dlbench::nn
