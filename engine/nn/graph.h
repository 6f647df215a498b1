// Graph: a model as a static list of layers in execution order, over named values. Built once
// per (model, batch, input size); the Executor plans its memory and runs it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/nn/layer.h"

namespace dlbench::nn {

using ValueId = int;

struct ValueInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  int producer = -1;        // node index; -1 for a graph input
  bool needs_grad = false;  // graph inputs (data) need none
};

struct Node {
  std::string name;  // "layer1.0.conv2"
  std::unique_ptr<Layer> layer;
  std::vector<ValueId> inputs;
  ValueId output = -1;
};

class Graph {
 public:
  ValueId add_input(std::string name, Shape shape, DType dtype = DType::kF32);
  // Appends a layer; its output shape comes from the layer's own check of the inputs.
  ValueId add(std::string name, std::unique_ptr<Layer> layer, std::vector<ValueId> inputs);
  void set_output(ValueId logits) { output_ = logits; }
  // Every value (activations and the input) in one compute dtype.
  void set_dtype(DType dtype) {
    for (ValueInfo& v : values_) v.dtype = dtype;
  }

  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  const ValueInfo& value(ValueId id) const { return values_.at(static_cast<std::size_t>(id)); }
  ValueId output() const { return output_; }
  ValueId input() const { return input_; }

 private:
  std::vector<ValueInfo> values_;
  std::vector<Node> nodes_;
  ValueId input_ = -1;
  ValueId output_ = -1;
};

// Counted from the layers' declarations, without a backend or memory.
std::int64_t parameter_count(const Graph& graph);
std::int64_t forward_macs(const Graph& graph);
// Forward plus backward; layers whose input needs no gradient skip that part.
std::int64_t train_macs(const Graph& graph);

}  // namespace dlbench::nn
