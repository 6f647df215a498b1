// Network: a Graph bound to a backend. Owns the parameters, the layers' state and the planned
// activation arena; runs train steps (forward, loss, backward, SGD) and infer steps.
//
// Parameters live in flat buffers ordered [compute params with weight decay | compute params
// without | f32-only params (batch norm)]: f32 master weights, f32 gradients and momentum.
// In fp16/bf16 the compute params are also kept as a compute-dtype copy (cast from the
// masters before each forward) with compute-dtype gradients (cast to f32 after backward), so
// each cast and the fused SGD run once over a contiguous range. fp16 adds dynamic loss
// scaling: the loss gradient is multiplied by S, a step whose gradients are not all finite is
// skipped and halves S, and S doubles after kGrowthInterval clean steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/dist/communicator.h"
#include "engine/nn/gradient_buckets.h"
#include "engine/nn/graph.h"
#include "engine/nn/planner.h"

namespace dlbench::nn {

struct NetworkConfig {
  Mode mode = Mode::kTrain;
  Precision precision = Precision::kFp32;
  backend::SgdParams sgd;
  std::uint64_t seed = 42;              // weights are the same on every device and rank for a seed
  float initial_loss_scale = 65536.0f;  // fp16 only (2^16, as PyTorch's GradScaler)
  int loss_scale_growth_interval = 2000;
  // Data parallel: gradients are summed over the communicator's ranks in buckets of about
  // this size that start while backward runs, and averaged in the update; rank 0's initial
  // weights are copied to every rank. Null: one replica.
  dist::Communicator* communicator = nullptr;
  // Replay each step as recorded device graphs (CUDA graphs) from the second step on, where
  // the backend can record; a failed recording falls back to issuing ops one by one.
  bool device_graphs = true;
  std::size_t bucket_bytes = std::size_t{25} << 20;  // as PyTorch DDP's default
};

// Bytes the network holds on its device, known before the first step.
struct MemoryReport {
  std::size_t parameters = 0;   // weights
  std::size_t optimizer = 0;    // gradients and momentum (training)
  std::size_t state = 0;        // running/saved statistics, workspaces
  std::size_t activations = 0;  // the planned arena: activations and their gradients
  std::size_t total() const { return parameters + optimizer + state + activations; }
};

// Where one parameter tensor lives in the flat f32 buffers.
struct ParameterSlice {
  std::string name;  // "layer1.0.conv1.weight"
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

struct LayerSummary {
  std::string name;
  std::string kind;
  Shape output;
  std::int64_t parameters = 0;
  std::int64_t forward_macs = 0;
};

// The parts of a step, as a LayerObserver sees them.
enum class Pass { kForward, kLoss, kBackward, kGradientSync, kUpdate };
const char* to_string(Pass pass);

// Sees each node's forward and backward and the step's other parts as the host issues them
// (per-layer profiling records device events here). `node` indexes graph().nodes() for
// kForward and kBackward and is 0 otherwise.
class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  virtual void begin(Pass pass, std::size_t node) = 0;
  virtual void end(Pass pass, std::size_t node) = 0;
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

  // Null (the default) for none; the observer must outlive the steps it watches.
  void set_observer(LayerObserver* observer) { observer_ = observer; }

  Mode mode() const { return config_.mode; }
  DType dtype() const { return dtype_; }
  // fp16 loss scaling: steps skipped because of non-finite gradients, and the current scale.
  int skipped_steps() const { return skipped_steps_; }
  float loss_scale() const { return loss_scale_; }
  const Graph& graph() const { return graph_; }
  std::int64_t parameter_count() const { return parameter_count_; }
  std::int64_t forward_macs() const;  // per batch
  std::int64_t train_macs() const;    // forward + backward, per batch
  MemoryReport memory() const;
  std::vector<LayerSummary> layer_summaries() const;
  const std::vector<ParameterSlice>& parameter_slices() const { return slices_; }
  // Whether steps replay device graphs, and if not, why: "on (1 recording; ...)".
  std::string graph_status() const;
  // Data parallel: the all-reduce buckets in launch order (empty for one replica).
  const std::vector<GradientBucket>& gradient_buckets() const { return buckets_; }

  // For tests and gradient checks: the flat buffers and one value's tensors.
  Tensor flat_weights() const { return flat(weights_, DType::kF32, parameter_count_); }
  Tensor flat_grads() const { return flat(grads_, DType::kF32, parameter_count_); }
  Tensor value(ValueId v) const { return values_.at(static_cast<std::size_t>(v)); }
  Tensor logits() const { return value(graph_.output()); }

 private:
  struct NodeBinding {
    std::vector<Tensor> params, grads, state;
  };
  Tensor flat(const Buffer& b, DType dtype, std::int64_t count, std::int64_t begin = 0) const;
  bool mixed() const { return dtype_ != DType::kF32; }
  void bind_parameters();
  // What a recording depends on besides the network itself: the batch's addresses and the
  // loss scale (an argument of the loss gradient and the update).
  struct StepKey {
    const void* images = nullptr;
    const void* labels = nullptr;
    float loss_scale = 1.0f;
    bool operator==(const StepKey&) const = default;
  };
  struct StepGraphs {
    StepKey key;
    std::unique_ptr<backend::DeviceGraph> gradients;  // forward..backward, or inference
    std::unique_ptr<backend::DeviceGraph> update;
  };
  // Forward, loss, backward with the bucketed all-reduce, and the gradients' cast to f32.
  void compute_gradients(const Tensor& images, const Tensor& labels);
  bool graphs_wanted() const;
  void record_train_graphs(const Tensor& images, const Tensor& labels, StepKey key);
  void record_infer_graph(const Tensor& images);
  // The SGD step on gradients scaled by step_scale (fp16 loss scaling; 1 otherwise).
  void update_weights(float step_scale);
  // Data parallel: starts every bucket that node's backward completed.
  void reduce_ready_buckets(std::size_t node);
  Tensor bucket_tensor(const GradientBucket& b) const;
  void bind_state();
  void forward(const Tensor& images);
  StepContext context(std::size_t n, std::vector<Tensor>& inputs, std::vector<Tensor>& grads) const;

  Graph graph_;
  backend::Backend& backend_;
  NetworkConfig config_;
  ActivationPlan plan_;
  std::vector<NodeBinding> bindings_;
  std::vector<ParameterSlice> slices_;
  DType dtype_ = DType::kF32;
  Buffer weights_, grads_, velocity_, state_;
  Buffer compute_weights_, compute_grads_;  // fp16/bf16 only
  std::int64_t decayed_ = 0;                // [0, decayed_) get weight decay
  std::int64_t compute_ = 0;                // [0, compute_) are used in the compute dtype
  std::int64_t parameter_count_ = 0;
  float loss_scale_ = 1.0f;
  int skipped_steps_ = 0;
  int clean_steps_ = 0;
  std::unique_ptr<Arena> arena_;
  std::vector<Tensor> values_, value_grads_;
  Buffer loss_buffer_;
  Tensor loss_;
  LayerObserver* observer_ = nullptr;
  std::unique_ptr<StepGraphs> graphs_;
  std::string graph_failure_;
  int eager_steps_ = 0;
  int recordings_ = 0;
  std::vector<GradientBucket> buckets_;
  std::size_t next_bucket_ = 0;
};

}  // namespace dlbench::nn
