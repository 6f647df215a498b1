#include "engine/nn/graph.h"

namespace dlbench::nn {

ValueId Graph::add_input(std::string name, Shape shape, DType dtype) {
  DLBENCH_CHECK(input_ < 0, "one graph input (the batch of samples)");
  values_.push_back({std::move(name), shape, dtype, -1, false});
  input_ = static_cast<ValueId>(values_.size() - 1);
  return input_;
}

ValueId Graph::add(std::string name, std::unique_ptr<Layer> layer, std::vector<ValueId> inputs) {
  DLBENCH_CHECK(static_cast<int>(inputs.size()) == layer->num_inputs(),
                name + ": wrong number of inputs");
  std::vector<Shape> shapes;
  bool needs_grad = !layer->params().empty();
  for (ValueId v : inputs) {
    DLBENCH_CHECK(v >= 0 && v < static_cast<ValueId>(values_.size()), name + ": unknown input");
    shapes.push_back(value(v).shape);
    needs_grad = needs_grad || value(v).needs_grad;
  }
  Shape out = layer->output_shape(shapes);
  int node = static_cast<int>(nodes_.size());
  values_.push_back({name, out, value(inputs[0]).dtype, node, needs_grad});
  ValueId id = static_cast<ValueId>(values_.size() - 1);
  nodes_.push_back({std::move(name), std::move(layer), std::move(inputs), id});
  return id;
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
