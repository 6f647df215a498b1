// Graph: a model as a static list of layers in execution order, over typed, named values.
// Built once per (model, batch, size, compute dtype); the Executor plans its memory and runs it.
//
// A graph has one or more named inputs, each of its own dtype (f16 images, i32 labels or token
// ids), filled by a data source. A node has one or more outputs. Loss nodes (Layer::is_loss)
// come after every other node; each writes an f32 [1] loss, and in training also the gradient
// of what it reads, scaled by the loss scale. Marked outputs (logits, detector heads) are what
// inference produces.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/data/input_spec.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

using ValueId = int;
using ParamId = int;

// A parameter of the graph: declared by the first layer that uses it (named "<node>.<decl>")
// or on the graph itself (add_parameter), and read by every node in `users`.
struct ParamInfo {
  std::string name;  // "layer1.0.conv1.weight", "embedding.table"
  ParamDecl decl;
  std::vector<std::size_t> users;  // node indices, ascending
};

struct Node {
  std::string name;  // "layer1.0.conv2"
  std::unique_ptr<Layer> layer;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<ParamId> params;  // in the order the layer declares them
  ValueId output() const { return outputs.at(0); }
};

class Graph {
 public:
  // compute: the dtype activations and the compute copies of the weights are held in.
  explicit Graph(DType compute = DType::kF32) : compute_(compute) {}

  // Graph inputs in the order a data source fills them; names are unique.
  ValueId add_input(data::InputSpec spec);
  // A parameter that layers share: pass its id to add() for each of them.
  ParamId add_parameter(std::string name, ParamDecl decl);
  // Appends a layer with exactly one output, named as the node. params: the graph parameters
  // the layer reads, one per declaration and of its shape; empty makes each declaration a new
  // parameter of its own.
  ValueId add(std::string name, std::unique_ptr<Layer> layer, std::vector<ValueId> inputs,
              std::vector<ParamId> params = {});
  // Appends a layer with any number of outputs, named "<node>:<i>".
  std::vector<ValueId> add_multi(std::string name, std::unique_ptr<Layer> layer,
                                 std::vector<ValueId> inputs, std::vector<ParamId> params = {});
  // An inference result (the logits): kept alive to the end of the forward pass.
  void mark_output(ValueId value);

  DType compute_dtype() const { return compute_; }
  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  const ValueInfo& value(ValueId id) const { return values_.at(static_cast<std::size_t>(id)); }
  // In declaration order; the parameter store lays them out by group, then this order.
  const std::vector<ParamInfo>& params() const { return params_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<data::InputSpec>& input_specs() const { return input_specs_; }
  ValueId input(std::string_view name) const;  // internal error when there is none
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // Nodes [0, layer_count()) are the model's layers; the rest are its losses.
  std::size_t layer_count() const { return layers_; }
  bool has_loss() const { return layers_ < nodes_.size(); }

 private:
  std::vector<ValueId> append(std::string name, std::unique_ptr<Layer> layer,
                              std::vector<ValueId> inputs, std::vector<ParamId> params, bool multi);
  void bind_params(std::size_t node, std::vector<ParamId>& params);

  DType compute_;
  std::vector<ValueInfo> values_;
  std::vector<Node> nodes_;
  std::vector<ParamInfo> params_;
  std::vector<ValueId> inputs_, outputs_;
  std::vector<data::InputSpec> input_specs_;
  std::size_t layers_ = 0;
};

// Counted from the declarations, without a backend or memory (a shared parameter once).
std::int64_t parameter_count(const Graph& graph);
std::int64_t forward_macs(const Graph& graph);
// Forward plus backward; layers whose input needs no gradient skip that part.
std::int64_t train_macs(const Graph& graph);

}  // namespace dlbench::nn
