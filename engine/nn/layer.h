// Layer: one node of a model's static graph, with forward and backward side by side.
//
// A layer reads input values and writes its output values; the executor owns all memory and
// hands the layer tensors through a StepContext. At build time a layer declares its output
// shape, its parameters, its state (running statistics, saved batch statistics, workspaces),
// which values its backward needs, and its MACs, so the planner knows the peak memory and the
// runner knows the FLOPs before the first step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/run_modes.h"
#include "engine/core/tensor.h"

namespace dlbench::nn {

using backend::GradMode;

// kValues: state only, the StateDecl's own values (a constant the layer reads, such as class
// weights). kUniform and kConstant: parameters only (ParamDecl::bound and ::value).
enum class Init { kZeros, kOnes, kKaimingNormal, kNormal, kValues, kUniform, kConstant };

// How the optimizer and the precision policy treat a parameter; the parameter store keeps each
// group in one contiguous range of its flat buffers, in this order.
// The compute-dtype groups come first and stay contiguous; kSparseRows sits after kNotDecayed so
// that models without tables keep their parameters where they were.
enum class ParamGroup {
  kDecayed,     // used in the compute dtype, with weight decay (conv and linear weights)
  kNotDecayed,  // used in the compute dtype, no weight decay (biases)
  kSparseRows,  // compute dtype, no decay, [rows, columns] tables of which a step reads a few
                // rows (embeddings): the store keeps a touched-row mask per table
  kKeptF32,     // f32 in every precision (batch-norm parameters)
};
constexpr int kParamGroups = 4;

struct ParamDecl {
  std::string name;  // "weight", "bias", "gamma", ...
  Shape shape;
  Init init = Init::kZeros;
  std::int64_t fan_in = 1;  // for kKaimingNormal: std = sqrt(2 / fan_in)
  // Conv and linear weights decay; biases do not. Batch-norm parameters stay f32 in every
  // precision (cuDNN and oneDNN want them so); the rest are used in the compute dtype, copied
  // from the f32 master weights each step.
  ParamGroup group = ParamGroup::kNotDecayed;
  float stddev = 0.0f;  // for kNormal
  float bound = 0.0f;   // for kUniform: U(-bound, bound)
  float value = 0.0f;   // for kConstant
};

// Per-layer memory that is not a parameter: running statistics live across steps, saved
// statistics and workspaces from forward to backward. Always resident.
struct StateDecl {
  std::string name;
  std::size_t bytes = 0;
  Init init = Init::kZeros;  // kOnes for a running variance
  // Learned in training and read by inference (running statistics): Trainer::load_state carries
  // it to another trainer of the model. Scratch (saved statistics, masks, workspaces) is not.
  bool learned = false;
  std::vector<float> values = {};  // Init::kValues: the first floats (the rest zeros)
};

// What backward needs from forward, so the planner keeps exactly that alive.
struct SavedForBackward {
  std::vector<int> inputs;   // indices into the layer's inputs
  std::vector<int> outputs;  // indices into its outputs
};

// A value of the graph: an input, or one output of a node.
struct ValueInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  int producer = -1;        // node index; -1 for a graph input
  int output_index = 0;     // which output of the producer
  bool needs_grad = false;  // graph inputs (data) and loss outputs need none
};

// What a layer says of each output at build time. A value no gradient flows back through (a
// convolution's batch-norm statistics) is not differentiable.
struct OutputInfo {
  Shape shape;
  DType dtype = DType::kF32;
  bool differentiable = true;
};

// Everything a layer touches in one step.
struct StepContext {
  backend::Backend& backend;
  Mode mode;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> params;
  std::span<const Tensor> state;
  // Backward only: gradients of the outputs, gradients of the inputs (undefined when that
  // input needs none) and whether each input gradient is overwritten or accumulated.
  std::span<const Tensor> output_grads;
  std::span<const Tensor> input_grads;
  std::span<const GradMode> input_grad_modes;
  std::span<const Tensor> param_grads;
  // Per parameter: overwrite for its first gradient in the step, accumulate for the users of a
  // shared parameter after that.
  std::span<const GradMode> param_grad_modes;
  // Loss layers multiply the gradient they write by it (fp16 loss scaling, read on the device;
  // 1 otherwise).
  backend::LossScale loss_scale = 1.0f;
  // Training, per parameter: for a ParamGroup::kSparseRows table, its i32 [rows] touched mask,
  // written in the parameter's gradient mode with its gradient (embedding_backward); undefined
  // for the others.
  std::span<const Tensor> param_rows = {};

  const Tensor& output() const { return outputs[0]; }
  const Tensor& output_grad() const { return output_grads[0]; }
};

// The op a layer runs its forward with when it takes a ReLU into it as an epilogue, with the
// parameters to ask Backend::supports about.
struct ReluEpilogue {
  backend::OpKind op;
  backend::OpParams params;
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual const char* kind() const = 0;
  virtual int num_inputs() const { return 1; }
  // Checks the inputs and says what the outputs are; called once at build time. By default
  // one output of output_shape() in the dtype of input 0; layers with several outputs, or
  // whose output dtype differs (losses: f32), override this instead.
  virtual std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const;
  virtual Shape output_shape(std::span<const Shape> inputs) const;
  // A loss: runs after every other node (in training only), writes an f32 [1] loss and, in
  // the same forward, the gradient of what it reads. Its backward does nothing.
  virtual bool is_loss() const { return false; }
  // What parameters the layer reads, in the order it reads them; the graph makes each a graph
  // parameter, or binds one already declared on the graph (a shared, tied weight).
  virtual std::vector<ParamDecl> params() const { return {}; }
  // Whether the layer's backward can add its parameters' gradients to what is there (as a
  // second user of a shared parameter must), or only overwrite them (batch norm).
  virtual bool accumulates_param_grads() const { return true; }
  virtual std::vector<StateDecl> state(backend::Backend&) const { return {}; }
  virtual SavedForBackward saved_for_backward() const { return {}; }
  // Multiply-accumulates of one forward pass over the whole batch.
  virtual std::int64_t forward_macs() const { return 0; }
  // Of the backward pass; skip_input_grad says the layer's input needs no gradient.
  virtual std::int64_t backward_macs(bool skip_input_grad) const {
    (void)skip_input_grad;
    return 0;
  }

  // The ReLU-epilogue passes: the op this layer would run with a ReLU folded into it (nullopt
  // when it cannot, or already has one), and folding it in for a graph that runs in `mode`
  // (training keeps what the ReLU's backward needs).
  virtual std::optional<ReluEpilogue> relu_epilogue() const { return std::nullopt; }
  virtual void fuse_relu(Mode mode) { (void)mode; }

  // fp32 strict or TF32 for the layer's matrix products (convolution, matmul).
  virtual void set_math(backend::MathMode) {}

  // Work done once, before the first forward, from the parameters and state as they are then
  // (a batch norm folded into a convolution's weights for inference). The first forward runs
  // eagerly, so this is never part of a device-graph recording.
  virtual void prepare(const StepContext& ctx) { (void)ctx; }

  virtual void forward(const StepContext& ctx) = 0;
  virtual void backward(const StepContext& ctx) = 0;
};

}  // namespace dlbench::nn
