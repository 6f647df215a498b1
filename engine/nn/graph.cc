#include "engine/nn/graph.h"

#include <algorithm>

namespace dlbench::nn {

ValueId Graph::add_input(data::InputSpec spec) {
  for (ValueId v : inputs_)
    DLBENCH_CHECK(value(v).name != spec.name, "two graph inputs named '" + spec.name + "'");
  values_.push_back({spec.name, spec.shape, spec.dtype, -1, 0, false});
  inputs_.push_back(static_cast<ValueId>(values_.size() - 1));
  input_specs_.push_back(std::move(spec));
  return inputs_.back();
}

ValueId Graph::input(std::string_view name) const {
  for (ValueId v : inputs_)
    if (value(v).name == name) return v;
  throw Error(ErrorKind::kInternal, "the graph has no input named '" + std::string(name) + "'");
}

ParamId Graph::add_parameter(std::string name, ParamDecl decl) {
  for (const ParamInfo& p : params_)
    DLBENCH_CHECK(p.name != name, "two graph parameters named '" + name + "'");
  params_.push_back({std::move(name), std::move(decl), {}});
  return static_cast<ParamId>(params_.size() - 1);
}

ValueId Graph::add(std::string name, std::unique_ptr<Layer> layer, std::vector<ValueId> inputs,
                   std::vector<ParamId> params) {
  return append(std::move(name), std::move(layer), std::move(inputs), std::move(params), false)
      .at(0);
}

std::vector<ValueId> Graph::add_multi(std::string name, std::unique_ptr<Layer> layer,
                                      std::vector<ValueId> inputs, std::vector<ParamId> params) {
  return append(std::move(name), std::move(layer), std::move(inputs), std::move(params), true);
}

void Graph::bind_params(std::size_t node, std::vector<ParamId>& params) {
  const Node& n = nodes_[node];
  const std::vector<ParamDecl> decls = n.layer->params();
  if (params.empty()) {
    for (const ParamDecl& d : decls) params.push_back(add_parameter(n.name + "." + d.name, d));
  }
  DLBENCH_CHECK(params.size() == decls.size(), n.name + ": " + std::to_string(decls.size()) +
                                                   " parameters declared, " +
                                                   std::to_string(params.size()) + " given");
  for (std::size_t i = 0; i < params.size(); ++i) {
    DLBENCH_CHECK(params[i] >= 0 && params[i] < static_cast<ParamId>(params_.size()),
                  n.name + ": unknown parameter");
    ParamInfo& p = params_[params[i]];
    DLBENCH_CHECK(p.decl.shape == decls[i].shape,
                  n.name + ": parameter " + p.name + " has another shape than " + decls[i].name);
    p.users.push_back(node);
    // A second user adds its gradient to the first's: every user must be able to.
    if (p.users.size() > 1)
      for (std::size_t user : p.users)
        DLBENCH_CHECK(nodes_[user].layer->accumulates_param_grads(),
                      nodes_[user].name + " (" + nodes_[user].layer->kind() +
                          ") cannot share parameter " + p.name);
  }
}

std::vector<ValueId> Graph::append(std::string name, std::unique_ptr<Layer> layer,
                                   std::vector<ValueId> inputs, std::vector<ParamId> params,
                                   bool multi) {
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
    values_.push_back({value_name, outs[i].shape, outs[i].dtype, node, static_cast<int>(i),
                       needs_grad && outs[i].differentiable});
    ids.push_back(static_cast<ValueId>(values_.size() - 1));
  }
  if (!layer->is_loss()) ++layers_;
  nodes_.push_back({std::move(name), std::move(layer), std::move(inputs), ids, {}});
  bind_params(nodes_.size() - 1, params);
  nodes_.back().params = std::move(params);
  return ids;
}

void Graph::mark_output(ValueId v) {
  DLBENCH_CHECK(v >= 0 && v < static_cast<ValueId>(values_.size()), "unknown output value");
  if (std::find(outputs_.begin(), outputs_.end(), v) == outputs_.end()) outputs_.push_back(v);
}

std::int64_t parameter_count(const Graph& graph) {
  std::int64_t count = 0;
  for (const ParamInfo& p : graph.params()) count += p.decl.shape.numel();
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
