// Executor: runs a graph on a backend. At construction it fixes the graph's compute dtype and
// math mode, binds each layer's state and plans the activation arena (so peak memory is known
// before the first step); then it runs forward over every node and backward in reverse, with
// the parameters and their gradients of a ParameterStore; in training the graph's loss nodes
// run between the two. It knows nothing of optimizers or replicas (the Trainer ties those in).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/nn/graph.h"
#include "engine/nn/parameter_store.h"
#include "engine/nn/planner.h"
#include "engine/nn/step_observer.h"

namespace dlbench::nn {

struct LayerSummary {
  std::string name;
  std::string kind;
  Shape output;
  std::int64_t parameters = 0;
  std::int64_t forward_macs = 0;
};

class Executor {
 public:
  // The store must outlive the executor; its weights are what the layers read. `lend`: after
  // the first step, lend each node's ops the arena's memory that no value holds while the node
  // runs, for their workspace (Backend::lend_workspace).
  Executor(Graph graph, backend::Backend& backend, const ParameterStore& store, Mode mode,
           Precision precision, bool lend = true);

  // Points graph input `input` at a batch's tensor (checked against the input's shape and
  // dtype); it must stay valid while steps read it.
  void bind_input(ValueId input, const Tensor& tensor);
  // Every layer's forward (not the losses); the first call runs every layer's prepare() first.
  void forward();
  // Training: every loss node, writing its loss and the gradients of what it reads.
  void run_losses(const backend::LossScale& loss_scale);
  // Every layer's backward, last to first; after(node) runs once each node's backward is issued.
  void backward(const std::function<void(std::size_t node)>& after);
  // One f32 [1] tensor per loss node, in node order; resident, outside the arena.
  const std::vector<Tensor>& losses() const { return losses_; }

  Tensor value(ValueId v) const { return values_.at(static_cast<std::size_t>(v)); }
  Tensor value_grad(ValueId v) const { return value_grads_.at(static_cast<std::size_t>(v)); }
  const Graph& graph() const { return graph_; }
  Mode mode() const { return mode_; }
  std::vector<LayerSummary> layer_summaries() const;
  std::size_t activation_bytes() const { return arena_->capacity(); }
  // The largest workspace lent to a node's ops from the arena (0: none), memory the backend's
  // own workspace needs no longer.
  std::size_t lent_workspace_bytes() const;
  std::size_t state_bytes() const { return state_.bytes(); }
  // Copies every layer's learned state (StateDecl::learned: batch norm's running statistics)
  // from `other`, an executor of the same model (another batch or mode, fused differently): from
  // the node there that holds one of the same layers, state by state name. Throws
  // Error(kInternal) when a learned state has no state of that name and size there.
  void copy_state_from(const Executor& other);

  // Null (the default) for none; the observer must outlive the steps it watches.
  void set_observer(StepObserver* observer) { observer_ = observer; }
  StepObserver* observer() const { return observer_; }

 private:
  void bind_state();
  // What one node's context points into; reused from node to node.
  struct Scratch {
    std::vector<Tensor> inputs, input_grads, outputs, output_grads;
  };
  StepContext context(std::size_t n, Scratch& scratch,
                      const backend::LossScale& loss_scale = {}) const;
  // A node pass's workspace: the most its ops asked for in the first step, and where in the
  // arena it fits while the node runs (kNoBuffer: the backend's own workspace serves it).
  struct NodeWorkspace {
    std::size_t bytes = 0;
    std::size_t offset = kNoBuffer;
  };
  // Runs one node's pass: in the first step it notes what workspace the pass asks for; later it
  // lends the pass its place in the arena.
  void run_pass(NodeWorkspace& workspace, const std::function<void()>& pass);
  // After a step's last pass: the first places every node's workspace in the arena, or hands it
  // back to the backend's own workspace (Backend::keep_workspace) where it does not fit.
  void finish_step();

  Graph graph_;
  backend::Backend& backend_;
  const ParameterStore& store_;
  Mode mode_;
  ActivationPlan plan_;
  Buffer state_;
  std::vector<std::vector<Tensor>> node_state_;
  std::vector<std::vector<StateDecl>> node_state_decls_;  // what each of node_state_ is
  std::unique_ptr<Arena> arena_;
  std::vector<Tensor> values_, value_grads_;
  Buffer loss_buffer_;
  std::vector<Tensor> losses_;
  StepObserver* observer_ = nullptr;
  bool prepared_ = false;
  std::vector<NodeWorkspace> forward_workspace_, backward_workspace_;  // per layer
  bool may_lend_;
  int steps_ = 0;  // finished: forward in inference, backward in training
};

}  // namespace dlbench::nn
