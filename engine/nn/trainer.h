// Trainer: a graph bound to a backend, running train steps (forward, loss, backward, the
// gradient all-reduce, the update) and infer steps. It ties together the parts that each do one
// thing: the ParameterStore (flat parameter buffers and their casts), the Executor (planned
// memory, forward and backward), the Optimizer, the LossScaler (fp16) and, with replicas, the
// GradientReducer; and it records each step as device graphs (CUDA graphs) to replay.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/dist/communicator.h"
#include "engine/nn/executor.h"
#include "engine/nn/gradient_reducer.h"
#include "engine/nn/graph.h"
#include "engine/nn/loss_scaler.h"
#include "engine/nn/optim/optimizer.h"
#include "engine/nn/parameter_store.h"
#include "engine/nn/passes/pass.h"

namespace dlbench::nn {

struct TrainerConfig {
  Mode mode = Mode::kTrain;
  Precision precision = Precision::kFp32;
  OptimizerConfig optimizer;
  std::uint64_t seed = 42;  // weights are the same on every device and rank for a seed
  // fp16 only: `dynamic` is set from the precision.
  float initial_loss_scale = 65536.0f;
  int loss_scale_growth_interval = 2000;
  // Data parallel: gradients are summed over the communicator's ranks in buckets of about
  // this size that start while backward runs, and averaged in the update; rank 0's initial
  // weights are copied to every rank. Null: one replica.
  dist::Communicator* communicator = nullptr;
  // Replay each step as recorded device graphs (CUDA graphs) from the second step on, where
  // the backend can record; a failed recording falls back to issuing ops one by one.
  bool device_graphs = true;
  std::size_t bucket_bytes = std::size_t{25} << 20;  // as PyTorch DDP's default
  // kOn: graph passes (passes/pass.h) rewrite the graph before it is planned. kOff runs the
  // graph as the model built it: the reference that fused graphs are tested against.
  Fusion fusion = Fusion::kOff;
  // Lend each layer's ops the activation memory free while they run for their workspace
  // (Executor); false keeps every workspace in the backend's own buffer, the reference that
  // lent workspaces are tested against.
  bool lend_workspace = true;
};

// Bytes the trainer holds on its device, known before the first step.
struct MemoryReport {
  std::size_t parameters = 0;   // weights
  std::size_t optimizer = 0;    // gradients and optimizer state (training)
  std::size_t state = 0;        // running/saved statistics, workspaces
  std::size_t activations = 0;  // the planned arena: activations and their gradients
  // Of the arena, the most lent to one node's ops for their workspace while no value used it.
  std::size_t lent_workspace = 0;
  std::size_t total() const { return parameters + optimizer + state + activations; }
};

class Trainer {
 public:
  Trainer(Graph graph, backend::Backend& backend, const TrainerConfig& config);
  // The executor and the reducer hold references to the store: a Trainer stays where it is.
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // The graph's inputs, in graph input order: resident buffers the trainer owns, allocated
  // once, that a data source fills before each step (data::DataSource::fill).
  std::span<const Tensor> inputs() const { return inputs_; }
  // One training step on what inputs() hold; does not wait for the device. loss() reads the
  // last step's loss, the sum of the graph's losses (and waits).
  void train_step();
  float loss();
  // One forward pass (no loss); BN uses running statistics.
  void infer_step();
  // Replaces the weights with `flat` (f32, laid out as flat_weights(): another trainer's of the
  // same model, say trained at another batch), before this trainer's first step, so trained
  // weights can be evaluated on other inputs. Layer state (running statistics) is not copied:
  // load_state does that.
  void load_weights(const Tensor& flat);
  // Copies each of this trainer's parameters from the parameter of the same name in `from`, a
  // trainer of another graph of the same model (a decoder's step graph, from the trained
  // model's), before this trainer's first step. `every`: each must be there, of the same size
  // (Error(kInternal) otherwise); else those not there keep their own. Returns how many it copied.
  int load_weights_by_name(const Trainer& from, bool every);
  // Copies `trained`'s layer state (batch norm's running statistics, which inference uses)
  // into this trainer's, layer by layer name, before this trainer's first step.
  void load_state(const Trainer& trained);

  // Null (the default) for none; the observer must outlive the steps it watches.
  void set_observer(StepObserver* observer) { executor_.set_observer(observer); }

  Mode mode() const { return config_.mode; }
  DType dtype() const { return store_.compute_dtype(); }
  // fp16 loss scaling: steps skipped because of non-finite gradients, and the current scale.
  int skipped_steps() const { return scaler_.skipped_steps(); }
  float loss_scale() const { return scaler_.scale(); }
  const Graph& graph() const { return executor_.graph(); }
  std::int64_t parameter_count() const { return store_.count(); }
  std::int64_t forward_macs() const;  // per batch
  std::int64_t train_macs() const;    // forward + backward, per batch
  MemoryReport memory() const;
  std::vector<LayerSummary> layer_summaries() const { return executor_.layer_summaries(); }
  const std::vector<ParameterSlice>& parameter_slices() const { return store_.slices(); }
  // Whether steps replay device graphs, and if not, why: "on (1 recording; ...)".
  std::string graph_status() const;
  // What the graph passes rewrote (empty with fusion off).
  const PassReport& passes() const { return passes_; }
  // Data parallel: the all-reduce buckets in launch order (empty for one replica).
  std::vector<GradientBucket> gradient_buckets() const;

  // For tests and gradient checks: the flat buffers and one value's tensors.
  Tensor flat_weights() const { return store_.flat_weights(); }
  Tensor flat_grads() const { return store_.flat_grads(); }
  Tensor value(ValueId v) const { return executor_.value(v); }
  Tensor logits() const { return value(graph().outputs().at(0)); }

 private:
  struct PassedGraph {
    Graph graph;
    PassReport report;
  };
  static PassedGraph with_passes(Graph graph, const backend::Backend& backend,
                                 const TrainerConfig& config);
  Trainer(PassedGraph passed, backend::Backend& backend, const TrainerConfig& config);

  // What a recording depends on besides the trainer's own buffers: the backend's scratch staying
  // where it was (an op run between steps, another model's or a decoder's, may reallocate it),
  // and for the update alone the loss scale (an argument of its kernels; the losses read the
  // scale on the device). The batch is always in inputs().
  struct StepGraphs {
    float loss_scale = 1.0f;                          // the update's
    std::unique_ptr<backend::DeviceGraph> gradients;  // forward..backward, or inference
    std::unique_ptr<backend::DeviceGraph> update;
    bool current() const { return gradients->current() && (!update || update->current()); }
  };
  // Forward, loss, backward with the bucketed all-reduce, and the gradients' cast to f32.
  void compute_gradients();
  // The optimizer on gradients scaled by step_scale, then the compute copy of the weights.
  void update_weights(float step_scale);
  bool graphs_wanted() const;
  // After the first step (which noted the layers' workspaces and lent those that fit in the
  // arena), the backend's own workspace gives back what the steps no longer ask of it, graphs
  // or not.
  void fit_workspace_after_first_step();
  // Runs a recording; one that throws leaves no graphs, and eager steps from then on.
  void recording(const std::function<void()>& record);
  void record_train_graphs();
  // The update alone, at the scaler's current scale.
  void record_update(StepGraphs& graphs);
  void record_infer_graph();

  TrainerConfig config_;
  backend::Backend& backend_;
  PassReport passes_;
  ParameterStore store_;
  Executor executor_;
  std::unique_ptr<Optimizer> optimizer_;  // training only
  LossScaler scaler_;
  std::optional<GradientReducer> reducer_;  // training with replicas only
  Buffer input_buffer_;                     // every graph input, one after another
  std::vector<Tensor> inputs_;
  std::unique_ptr<StepGraphs> graphs_;
  std::string graph_failure_;
  int eager_steps_ = 0;
  int recordings_ = 0;             // of the whole step
  int update_recordings_ = 0;      // of the update alone, after a loss-scale change
  bool workspace_fitted_ = false;  // fit_workspace_after_first_step ran
};

}  // namespace dlbench::nn
