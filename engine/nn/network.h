// Network: a Graph bound to a backend. Owns the parameters (one flat fp32 buffer each for
// weights, gradients and momentum, weight-decayed tensors first), the layers' state and the
// planned activation arena; runs train steps (forward, loss, backward, SGD) and infer steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/nn/graph.h"
#include "engine/nn/planner.h"

namespace dlbench::nn {

struct NetworkConfig {
  Mode mode = Mode::kTrain;
  backend::SgdParams sgd;
  std::uint64_t seed = 42;  // weights are the same on every device and rank for a seed
};

// Bytes the network holds on its device, known before the first step.
struct MemoryReport {
  std::size_t parameters = 0;   // weights
  std::size_t optimizer = 0;    // gradients and momentum (training)
  std::size_t state = 0;        // running/saved statistics, workspaces
  std::size_t activations = 0;  // the planned arena: activations and their gradients
  std::size_t total() const { return parameters + optimizer + state + activations; }
};

struct LayerSummary {
  std::string name;
  std::string kind;
  Shape output;
  std::int64_t parameters = 0;
  std::int64_t forward_macs = 0;
};

class Network {
 public:
  Network(Graph graph, backend::Backend& backend, const NetworkConfig& config);

  // One training step on a batch (images as the graph input, i32 labels); does not wait for
  // the device. loss() reads the last step's loss (and waits).
  void train_step(const Tensor& images, const Tensor& labels);
  float loss();
  // One forward pass; BN uses running statistics.
  void infer_step(const Tensor& images);

  Mode mode() const { return config_.mode; }
  const Graph& graph() const { return graph_; }
  std::int64_t parameter_count() const { return parameter_count_; }
  std::int64_t forward_macs() const;  // per batch
  std::int64_t train_macs() const;    // forward + backward, per batch
  MemoryReport memory() const;
  std::vector<LayerSummary> layer_summaries() const;

  // For tests and gradient checks: the flat buffers and one value's tensors.
  Tensor flat_weights() const { return flat(weights_); }
  Tensor flat_grads() const { return flat(grads_); }
  Tensor value(ValueId v) const { return values_.at(static_cast<std::size_t>(v)); }
  Tensor logits() const { return value(graph_.output()); }

 private:
  struct NodeBinding {
    std::vector<Tensor> params, grads, state;
  };
  Tensor flat(const Buffer& b) const;
  void bind_parameters();
  void bind_state();
  void forward(const Tensor& images);
  StepContext context(std::size_t n, std::vector<Tensor>& inputs, std::vector<Tensor>& grads) const;

  Graph graph_;
  backend::Backend& backend_;
  NetworkConfig config_;
  ActivationPlan plan_;
  std::vector<NodeBinding> bindings_;
  Buffer weights_, grads_, velocity_, state_;
  std::size_t decayed_floats_ = 0;  // weights_[0, decayed_floats_) get weight decay
  std::int64_t parameter_count_ = 0;
  std::unique_ptr<Arena> arena_;
  std::vector<Tensor> values_, value_grads_;
  Buffer loss_buffer_;
  Tensor loss_;
};

}  // namespace dlbench::nn
