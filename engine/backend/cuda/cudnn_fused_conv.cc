// The graph (x * scale + shift -> relu ->) conv -> (+ bias) -> (+ residual) -> (relu) (->
// statistics of y) and the choice of its engine; see cudnn_fused_conv.h.
//
// cuDNN names dimensions logically (N, C, H, W for activations, K, C, R, S for filters) and
// takes the memory order from the strides, so NHWC activations and KRSC weights are the same
// channels-last strides, and the bias is a [1, K, 1, 1] tensor that the ADD broadcasts over N,
// H and W.
#include "engine/backend/cuda/cudnn_fused_conv.h"

#include <array>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_types.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

// The graph's tensors, as the variant pack names them. Virtual ones never get a pointer.
constexpr std::int64_t kUidX = 1;
constexpr std::int64_t kUidW = 2;
constexpr std::int64_t kUidBias = 3;
constexpr std::int64_t kUidY = 4;
constexpr std::int64_t kUidResidual = 5;
constexpr std::int64_t kUidSum = 6;
constexpr std::int64_t kUidSqsum = 7;
constexpr std::int64_t kUidScale = 8;
constexpr std::int64_t kUidShift = 9;
constexpr std::int64_t kUidConvOut = 101;
constexpr std::int64_t kUidBiasOut = 102;
constexpr std::int64_t kUidResidualOut = 103;
constexpr std::int64_t kUidScaled = 104;
constexpr std::int64_t kUidShifted = 105;
constexpr std::int64_t kUidInput = 106;

}  // namespace

FusedConvForward::FusedConvForward(cudnnHandle_t handle, const ConvParams& params, DType dtype,
                                   std::size_t workspace_limit, InputPrologue prologue)
    : params_(params), dtype_(dtype), workspace_limit_(workspace_limit), prologue_(prologue) {
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16) {
    unsupported_reason_ =
        std::string("the fused convolution takes f32, f16 or bf16, not ") + to_string(dtype);
    return;
  }
  DLBENCH_CHECK(params.out_h() > 0 && params.out_w() > 0,
                "the convolution's output is empty: check the padding, filter and strides");
  build_graph(handle);
}

const BackendDescriptor& FusedConvForward::keep(BackendDescriptor descriptor) {
  return parts_.emplace_back(std::move(descriptor));
}

void FusedConvForward::build_graph(cudnnHandle_t handle) {
  const ConvParams& p = params_;
  const cudnnDataType_t io = cudnn_dtype(dtype_, "fused convolution");
  const std::array<std::int64_t, 4> x_dims{p.n, p.c, p.h, p.w};
  const std::array<std::int64_t, 4> w_dims{p.k, p.c, p.r, p.s};
  const std::array<std::int64_t, 4> y_dims{p.n, p.k, p.out_h(), p.out_w()};
  const std::array<std::int64_t, 4> bias_dims{1, p.k, 1, 1};
  auto tensor = [&](const char* name, std::int64_t uid, const std::array<std::int64_t, 4>& dims,
                    cudnnDataType_t type, Storage storage) -> const BackendDescriptor& {
    return keep(make_tensor({name, uid, std::vector<std::int64_t>(dims.begin(), dims.end()),
                             channels_last_strides(dims), type, storage}));
  };

  const bool relu = p.activation == Activation::kRelu;
  const BackendDescriptor& x = tensor("x", kUidX, x_dims, io, Storage::kMemory);
  const BackendDescriptor& w = tensor("w", kUidW, w_dims, io, Storage::kMemory);
  const BackendDescriptor& y = tensor("y", kUidY, y_dims, io, Storage::kMemory);
  // The last operation writes y; the ones before it write virtual f32 intermediates.
  const BackendDescriptor& conv_out =
      p.bias || p.residual || relu
          ? tensor("conv output", kUidConvOut, y_dims, CUDNN_DATA_FLOAT, Storage::kVirtual)
          : y;
  const BackendDescriptor& conv = keep(
      make_convolution({p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w}));

  std::vector<const BackendDescriptor*> operations;
  // The convolution's input: x, or relu(x * scale + shift) in virtual f32 tensors.
  const BackendDescriptor* input = &x;
  if (prologue_ == InputPrologue::kScaleShiftRelu) {
    const std::array<std::int64_t, 4> channel_dims{1, p.c, 1, 1};
    auto step = [&](cudnnPointwiseMode_t mode, const BackendDescriptor* operand, const char* name,
                    std::int64_t uid) {
      const BackendDescriptor& out = tensor(name, uid, x_dims, CUDNN_DATA_FLOAT, Storage::kVirtual);
      operations.push_back(
          &keep(make_pointwise_op(keep(make_pointwise(mode)), *input, operand, out)));
      input = &out;
    };
    step(CUDNN_POINTWISE_MUL, &tensor("scale", kUidScale, channel_dims, io, Storage::kMemory),
         "x * scale", kUidScaled);
    step(CUDNN_POINTWISE_ADD, &tensor("shift", kUidShift, channel_dims, io, Storage::kMemory),
         "+ shift", kUidShifted);
    step(CUDNN_POINTWISE_RELU_FWD, nullptr, "relu", kUidInput);
  }
  operations.push_back(&keep(make_conv_forward_op(conv, *input, w, conv_out)));
  const BackendDescriptor* current = &conv_out;
  // current + operand as the next operation; into y when nothing comes after it.
  auto add = [&](const BackendDescriptor& operand, const char* name, std::int64_t uid, bool last) {
    const BackendDescriptor& sum =
        last ? y : tensor(name, uid, y_dims, CUDNN_DATA_FLOAT, Storage::kVirtual);
    const BackendDescriptor& op = keep(make_pointwise(CUDNN_POINTWISE_ADD));
    operations.push_back(&keep(make_pointwise_op(op, *current, &operand, sum)));
    current = &sum;
  };
  if (p.bias)
    add(tensor("bias", kUidBias, bias_dims, io, Storage::kMemory), "conv + bias", kUidBiasOut,
        !p.residual && !relu);
  if (p.residual)
    add(tensor("residual", kUidResidual, y_dims, io, Storage::kMemory), "+ residual",
        kUidResidualOut, !relu);
  if (relu) {
    const BackendDescriptor& relu_fwd = keep(make_pointwise(CUDNN_POINTWISE_RELU_FWD));
    operations.push_back(&keep(make_pointwise_op(relu_fwd, *current, nullptr, y)));
  }
  if (p.statistics)
    operations.push_back(&keep(make_gen_stats_op(
        y, tensor("sum", kUidSum, bias_dims, CUDNN_DATA_FLOAT, Storage::kMemory),
        tensor("sqsum", kUidSqsum, bias_dims, CUDNN_DATA_FLOAT, Storage::kMemory))));

  Refusable graph = make_operation_graph(handle, operations);
  if (!graph.descriptor) {
    unsupported_reason_ = "cuDNN has no pattern for this graph: " + graph.refusal;
    return;
  }
  const bool strict = dtype_ == DType::kF32 && params_.math == MathMode::kStrict;
  ChosenPlan chosen =
      choose_plan(handle, keep(std::move(*graph.descriptor)), workspace_limit_, strict);
  if (!chosen.plan) {
    unsupported_reason_ = chosen.refusal;
    return;
  }
  keep(std::move(*chosen.config));
  plan_ = std::move(chosen.plan);
  workspace_bytes_ = chosen.workspace_bytes;
  chosen_ = chosen.chosen;
}

bool FusedConvForward::takes(const void* x, const void* w, const void* bias, const void* residual,
                             const void* y, const float* statistics, const void* scale,
                             const void* shift) const {
  static_assert(kTensorAlignment == 16, "the descriptors promise what aligned16 checks");
  const bool statistics_fit =
      !params_.statistics ||
      (statistics != nullptr && aligned16(statistics) && aligned16(statistics + params_.k));
  return aligned16(x) && aligned16(w) && aligned16(bias) && aligned16(residual) && aligned16(y) &&
         aligned16(scale) && aligned16(shift) && statistics_fit;
}

void FusedConvForward::run(cudnnHandle_t handle, const void* x, const void* w, const void* bias,
                           const void* residual, void* y, void* workspace, float* statistics,
                           const void* scale, const void* shift) const {
  DLBENCH_CHECK(ok(), "FusedConvForward::run without an engine: " + unsupported_reason_);
  DLBENCH_CHECK((bias != nullptr) == params_.bias,
                "pass a bias exactly when the convolution has one");
  DLBENCH_CHECK((residual != nullptr) == params_.residual,
                "pass a residual exactly when the convolution has one");
  DLBENCH_CHECK((statistics != nullptr) == params_.statistics,
                "pass statistics exactly when the plan writes them");
  const bool prologue = prologue_ != InputPrologue::kNone;
  DLBENCH_CHECK((scale != nullptr) == prologue && (shift != nullptr) == prologue,
                "pass a scale and a shift exactly when the plan has the input prologue");
  DLBENCH_CHECK(workspace != nullptr || workspace_bytes_ == 0,
                "the fused convolution needs a workspace of workspace_bytes()");
  DLBENCH_CHECK(takes(x, w, bias, residual, y, statistics, scale, shift),
                "the fused convolution's tensors must be 16-byte aligned");
  // The pointers are read-only to cuDNN; the variant pack's C API takes them non-const.
  std::vector<std::int64_t> uids{kUidX, kUidW, kUidY};
  std::vector<void*> pointers{const_cast<void*>(x), const_cast<void*>(w), y};
  if (params_.bias) {
    uids.push_back(kUidBias);
    pointers.push_back(const_cast<void*>(bias));
  }
  if (params_.residual) {
    uids.push_back(kUidResidual);
    pointers.push_back(const_cast<void*>(residual));
  }
  if (params_.statistics) {
    uids.insert(uids.end(), {kUidSum, kUidSqsum});
    pointers.insert(pointers.end(), {statistics, statistics + params_.k});
  }
  if (prologue) {
    uids.insert(uids.end(), {kUidScale, kUidShift});
    pointers.insert(pointers.end(), {const_cast<void*>(scale), const_cast<void*>(shift)});
  }
  execute(handle, *plan_, uids, pointers, workspace);
}

}  // namespace dlbench::backend::cuda
