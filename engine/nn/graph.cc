#include "engine/nn/graph.h"

#include <algorithm>

namespace dlbench::nn {

ValueId Graph::add_input(std::string name, Shape shape, DType dtype) {
  for (ValueId v : inputs_)
    DLBENCH_CHECK(value(v).name != name, "two graph inputs named '" + name + "'");
  values_.push_back({std::move(name), shape, dtype, -1, 0, false});
  inputs_.push_back(static_cast<ValueId>(values_.size() - 1));
  return inputs_.back();
}

ValueId Graph::input(std::string_view name) const {
  for (ValueId v : inputs_)
    if (value(v).name == name) return v;
  throw Error(ErrorKind::kInternal, "the graph has no input named '" + std::string(name) + "'");
}

ValueId Graph::add(std::string name, std::unique_ptr<Layer> layer, std::vector<ValueId> inputs) {
  return append(std::move(name), std::move(layer), std::move(inputs), false).at(0);
}

std::vector<ValueId> Graph::add_multi(std::string name, std::unique_ptr<Layer> layer,
                                      std::vector<ValueId> inputs) {
  return append(std::move(name), std::move(layer), std::move(inputs), true);
}

std::vector<ValueId> Graph::append(std::string name, std::unique_ptr<Layer> layer,
                                   std::vector<ValueId> inputs, bool multi) {
  DLBENCH_CHECK(static_cast<int>(inputs.size()) == layer->num_inputs(),
                name + ": wrong number of inputs");
  DLBENCH_CHECK(layer->is_loss() || !has_loss(),
                name + ": a layer after a loss (losses come last)");
  std::vector<ValueInfo> in;
  bool needs_grad = !layer->params().empty();
  for (ValueId v : inputs) {
    DLBENCH_CHECK(v >= 0 && v < static_cast<ValueId>(values_.size()), name + ": unknown input");
    in.push_back(value(v));
    needs_grad = needs_grad || value(v).needs_grad;
  }
  // The loss is where gradients start: nothing flows into it.
  if (layer->is_loss()) needs_grad = false;
  const std::vector<OutputInfo> outs = layer->outputs(in);
  DLBENCH_CHECK(!outs.empty() && (multi || outs.size() == 1),
                name + ": add() takes a layer with one output, add_multi() several");
  const int node = static_cast<int>(nodes_.size());
  std::vector<ValueId> ids;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const std::string value_name = multi ? name + ":" + std::to_string(i) : name;
    values_.push_back(
        {value_name, outs[i].shape, outs[i].dtype, node, static_cast<int>(i), needs_grad});
    ids.push_back(static_cast<ValueId>(values_.size() - 1));
  }
  if (!layer->is_loss()) ++layers_;
  nodes_.push_back({std::move(name), std::move(layer), std::move(inputs), ids});
  return ids;
}

void Graph::mark_output(ValueId v) {
  DLBENCH_CHECK(v >= 0 && v < static_cast<ValueId>(values_.size()), "unknown output value");
  if (std::find(outputs_.begin(), outputs_.end(), v) == outputs_.end()) outputs_.push_back(v);
}

std::int64_t parameter_count(const Graph& graph) {
  std::int64_t count = 0;
  for (const Node& n : graph.nodes())
    for (const ParamDecl& d : n.layer->params()) count += d.shape.numel();
  return count;
}

std::int64_t forward_macs(const Graph& graph) {
  std::int64_t macs = 0;
  for (const Node& n : graph.nodes()) macs += n.layer->forward_macs();
  return macs;
}

std::int64_t train_macs(const Graph& graph) {
  std::int64_t macs = forward_macs(graph);
  for (const Node& n : graph.nodes())
    macs += n.layer->backward_macs(!graph.value(n.inputs[0]).needs_grad);
  return macs;
}

}  // namespace dlbench::nn
