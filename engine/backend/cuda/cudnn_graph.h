// cuDNN's graph API through its backend descriptors, in small pieces that later fused patterns
// (conv + genstats, scale-bias-relu prologues) reuse. A graph is tensors (each named by a unique
// id), operations that read and write them, an operation graph over the operations, engine
// configurations proposed by cuDNN's heuristics, and an execution plan for one of them; a
// variant pack binds the unique ids to device pointers for one execution.
//
// Every call is checked. A failure that can only be our mistake (a tensor or operation
// descriptor that does not finalize) throws Error(kExternal) naming the descriptor, the status
// and cuDNN's own last error message. cuDNN refusing a graph or a plan for lack of support is an
// answer, not an error: those helpers return the refusal so callers can fall back.
//
// cudnn_graph.cc has the descriptor owner, tensors and operations; cudnn_graph_plan.cc the
// operation graph, heuristics, engines, plans and execution.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <cudnn_graph.h>

#include "engine/core/dtype.h"

namespace dlbench::backend::cuda {

// cuDNN needs each tensor's base address aligned this far; cudaMalloc gives 256 bytes, and the
// vectorized engines want 16.
constexpr std::int64_t kTensorAlignment = 16;

// Owns one backend descriptor. The name is only for messages ("conv output", "execution plan").
class BackendDescriptor {
 public:
  BackendDescriptor(cudnnBackendDescriptorType_t type, std::string name);
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& other) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return descriptor_; }
  const std::string& name() const { return name_; }

  // Each setter throws on failure; they return *this so a descriptor is set up in one chain.
  BackendDescriptor& set(cudnnBackendAttributeName_t attribute, cudnnBackendAttributeType_t type,
                         std::int64_t count, const void* values);
  BackendDescriptor& set_int64(cudnnBackendAttributeName_t attribute, std::int64_t value);
  BackendDescriptor& set_int64s(cudnnBackendAttributeName_t attribute,
                                std::span<const std::int64_t> values);
  BackendDescriptor& set_float(cudnnBackendAttributeName_t attribute, float value);
  BackendDescriptor& set_bool(cudnnBackendAttributeName_t attribute, bool value);
  BackendDescriptor& set_data_type(cudnnBackendAttributeName_t attribute, cudnnDataType_t value);
  BackendDescriptor& set_handle(cudnnBackendAttributeName_t attribute, cudnnHandle_t handle);
  BackendDescriptor& set_descriptor(cudnnBackendAttributeName_t attribute,
                                    const BackendDescriptor& value);
  BackendDescriptor& set_descriptors(cudnnBackendAttributeName_t attribute,
                                     std::span<const BackendDescriptor* const> values);
  BackendDescriptor& set_pointers(cudnnBackendAttributeName_t attribute,
                                  std::span<void* const> values);

  // Throws Error(kExternal) naming this descriptor.
  void finalize();
  // Returns the status instead; the caller decides whether a failure is a refusal.
  cudnnStatus_t try_finalize();

 private:
  cudnnBackendDescriptor_t descriptor_ = nullptr;
  std::string name_;
};

// Throws as CUDNN_CHECK does (Error(kResource) for out of memory, else Error(kExternal)), with
// the action in place of a statement: "cuDNN graph failed with <status_name> in <action> at ...".
[[noreturn]] void throw_graph_error(const std::string& action, cudnnStatus_t status);

// A tensor by its logical dimensions (N, C, H, W for activations; K, C, R, S for filters) and
// strides that say the memory order. A virtual tensor lives only inside a fused kernel; a
// by-value one is a scalar whose variant-pack pointer is host memory holding its value.
enum class Storage { kMemory, kVirtual, kByValue };
struct TensorSpec {
  std::string name;
  std::int64_t uid = 0;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> strides;
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  Storage storage = Storage::kMemory;
};
BackendDescriptor make_tensor(const TensorSpec& spec);
// Strides of logical [N, C, H, W] dims laid out as NHWC (also KRSC for [K, C, R, S]), and of
// [N, C, D, H, W] as NDHWC (KTRSC).
std::vector<std::int64_t> channels_last_strides(std::span<const std::int64_t> nchw);

// A 2D cross-correlation (deep learning's convolution: no filter flip), computing in f32.
struct Conv2dGeometry {
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t dilation_h = 1, dilation_w = 1;
};
BackendDescriptor make_convolution(const Conv2dGeometry& geometry);
// The same over any number of spatial dimensions (one entry of each per dimension, outermost
// first: D, H, W).
BackendDescriptor make_convolution(std::span<const std::int64_t> pads,
                                   std::span<const std::int64_t> strides,
                                   std::span<const std::int64_t> dilations);
// A pointwise function (ADD, RELU_FWD, ...) computing in f32, or in `compute` (i32 for
// GEN_INDEX, boolean for comparisons and LOGICAL_AND); GEN_INDEX numbers the positions along
// `axis`.
BackendDescriptor make_pointwise(cudnnPointwiseMode_t mode);
BackendDescriptor make_pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                                 std::int64_t axis = -1);

// y = conv(x, w) + beta * y: alpha 1, beta 0 by default (y is overwritten).
BackendDescriptor make_conv_forward_op(const BackendDescriptor& convolution,
                                       const BackendDescriptor& x, const BackendDescriptor& w,
                                       const BackendDescriptor& y, float beta = 0.0f);
// The two backward passes of y = conv(x, w), each out = alpha * pass + beta * out (alpha 1):
// dx from dy and w; dw from x and dy.
BackendDescriptor make_conv_backward_data_op(const BackendDescriptor& convolution,
                                             const BackendDescriptor& dx,
                                             const BackendDescriptor& w,
                                             const BackendDescriptor& dy, float beta);
BackendDescriptor make_conv_backward_filter_op(const BackendDescriptor& convolution,
                                               const BackendDescriptor& x,
                                               const BackendDescriptor& dw,
                                               const BackendDescriptor& dy, float beta);
// y = f(x) for a unary mode, y = f(x, alpha2 b) for a binary one (b broadcast where its dims are
// 1; alpha2 -1 makes ADD a subtraction, as cuDNN's batch-norm patterns expect).
BackendDescriptor make_pointwise_op(const BackendDescriptor& pointwise, const BackendDescriptor& x,
                                    const BackendDescriptor* b, const BackendDescriptor& y,
                                    float alpha2 = 1.0f);
// dx = f'(x) dy for a backward mode (RELU_BWD: dy where x > 0, else 0).
BackendDescriptor make_pointwise_backward_op(const BackendDescriptor& pointwise,
                                             const BackendDescriptor& dy,
                                             const BackendDescriptor& x,
                                             const BackendDescriptor& dx);

// y = t ? x : b (BINARY_SELECT: b broadcast where its dims are 1, t boolean).
BackendDescriptor make_select_op(const BackendDescriptor& select, const BackendDescriptor& x,
                                 const BackendDescriptor& b, const BackendDescriptor& t,
                                 const BackendDescriptor& y);

// c = a b over the last two dims (batched over the others), computing in f32. The overrides
// are i32 [batch, 1, 1, 1] device tensors giving each batch entry's own M, N or K (rows past
// them are not computed); `padding` is the value the rows and columns past M and N read as.
struct MatmulExtents {
  const BackendDescriptor* m = nullptr;
  const BackendDescriptor* n = nullptr;
  const BackendDescriptor* k = nullptr;
  std::optional<double> padding;
};
BackendDescriptor make_matmul(std::optional<double> padding);
BackendDescriptor make_matmul_op(const BackendDescriptor& matmul, const BackendDescriptor& a,
                                 const BackendDescriptor& b, const BackendDescriptor& c,
                                 const MatmulExtents& extents);
// y = x reduced (MAX, ADD, ...) over the dims where y has 1 and x more, in f32.
BackendDescriptor make_reduction(cudnnReduceTensorOp_t op);
BackendDescriptor make_reduction_op(const BackendDescriptor& reduction, const BackendDescriptor& x,
                                    const BackendDescriptor& y);
// y = x seen through y's dims and strides (a transpose, when they swap two).
BackendDescriptor make_reshape_op(const BackendDescriptor& x, const BackendDescriptor& y);

// sum[c] = sum of x over every position of channel c, sqsum[c] the same of x^2 (both [1, C, 1,
// 1], f32): the batch-norm statistics of x, read where x is written.
BackendDescriptor make_gen_stats_op(const BackendDescriptor& x, const BackendDescriptor& sum,
                                    const BackendDescriptor& sqsum);

// The weight gradients of a training batch norm y = scale (x - mean) invstd + bias, from x, dy and
// the forward's saved mean and invstd (all [1, C, 1, 1] f32 but x and dy): dscale = sum dy xhat,
// dbias = sum dy, and the coefficients of dx = eq_dy_scale dy + eq_x_scale x + eq_bias.
struct BatchNormWeightGradients {
  const BackendDescriptor* x;
  const BackendDescriptor* dy;
  const BackendDescriptor* mean;
  const BackendDescriptor* invstd;
  const BackendDescriptor* scale;
  const BackendDescriptor* dscale;
  const BackendDescriptor* dbias;
  const BackendDescriptor* eq_dy_scale;
  const BackendDescriptor* eq_x_scale;
  const BackendDescriptor* eq_bias;
};
BackendDescriptor make_bn_backward_weights_op(const BatchNormWeightGradients& t);

// A descriptor cuDNN finalized, or why it refused to.
struct Refusable {
  std::optional<BackendDescriptor> descriptor;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::string refusal;  // status_name(status), empty when it finalized
};
// cuDNN refuses a graph it has no pattern for (a NOT_SUPPORTED status); any other failure
// means the graph is malformed, and throws.
Refusable make_operation_graph(cudnnHandle_t handle,
                               std::span<const BackendDescriptor* const> operations);

// The engine configurations cuDNN's heuristics propose for a finalized graph, best first. The
// heuristics failing (other than for memory) is a refusal like an empty list: it says why.
struct EngineConfigs {
  std::vector<BackendDescriptor> configs;
  std::string refusal;
};
EngineConfigs engine_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode);
const char* heuristic_name(cudnnBackendHeurMode_t mode);

// The engine behind a configuration: its global index (stable within a cuDNN version, the
// number cuDNN's logs and cudnn-frontend print) and its numerical notes.
struct EngineInfo {
  std::int64_t global_index = -1;
  std::vector<cudnnBackendNumericalNote_t> numerical_notes;
  bool has(cudnnBackendNumericalNote_t note) const;
};
EngineInfo engine_info(const BackendDescriptor& engine_config);
std::string to_string(std::span<const cudnnBackendNumericalNote_t> notes);
// Strict f32 means fp32 products and sums: engines on tensor cores read f32 as TF32 (10
// mantissa bits), which cuDNN notes as tensor-core and down-converting.
bool uses_reduced_precision(const EngineInfo& info);

// Which engine a plan runs, for logs and failing tests.
struct ChosenEngine {
  const char* heuristic = "";  // the heuristic mode that proposed it ("A", "fallback")
  int config_index = -1;       // its position in that mode's list, best first
  std::int64_t engine_global_index = -1;
  std::string numerical_notes;  // "tensor_core,down_convert_inputs" or "none"
  std::string describe() const;
};

// The first engine configuration (heuristic mode A, which ranks by a trained model and knows
// the runtime-fusion engines, then fallback) whose plan finalizes and whose workspace stays
// within workspace_limit; under strict f32, engines noted as reduced precision are skipped.
// None is an answer: plan is empty and refusal says what was proposed and why each failed.
struct ChosenPlan {
  std::optional<BackendDescriptor> plan;
  std::optional<BackendDescriptor> config;  // kept alive as long as the plan
  std::size_t workspace_bytes = 0;
  ChosenEngine chosen;
  std::string refusal;
};
ChosenPlan choose_plan(cudnnHandle_t handle, const BackendDescriptor& graph,
                       std::size_t workspace_limit, bool strict);

// Any failure is a refusal: engines reject shapes, alignments and dtypes at this step.
Refusable make_execution_plan(cudnnHandle_t handle, const BackendDescriptor& engine_config);
std::int64_t plan_workspace_bytes(const BackendDescriptor& plan);

// Binds the graph's memory tensors (by uid) to device pointers, and runs the plan on the
// handle's stream.
void execute(cudnnHandle_t handle, const BackendDescriptor& plan,
             std::span<const std::int64_t> uids, std::span<void* const> pointers, void* workspace);

}  // namespace dlbench::backend::cuda
