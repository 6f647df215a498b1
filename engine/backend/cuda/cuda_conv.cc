// Convolution on cuDNN: forward, backward-data and backward-weights side by side.
//
//   y[n, p, q, k]  = b[k] + sum_{r, s, c} x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c] w[k, r, s, c]
//   dx[n, h, w, c] = sum over the (p, q, r, s, k) that read x[n, h, w, c] of dy[n, p, q, k] w[k, r,
//   s, c] dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
//   db[k]          = sum_{n, p, q} dy[n, p, q, k]
// A ReLU epilogue (Conv2dParams::activation) applies max(y, 0) after the bias and the residual
// (Conv2dParams::residual, inference's folded residual tail): in cuBLASLt's epilogue on the
// matrix-product route (the residual as its C matrix), in one pass after cuDNN's legacy forward,
// or inside one cuDNN graph-API plan (conv + bias + residual + ReLU, cudnn_fused_conv.h) where
// cuDNN has an engine for the shape and it measured faster than either.
//
// cuDNN names dimensions logically (N, C, H, W; K, C, R, S) whatever the memory order; the
// format CUDNN_TENSOR_NHWC says our activations are NHWC and our KRSC weights are a filter in
// the same channels-last order, so nothing is transposed. cuDNN computes
// out = alpha * conv + beta * out, so GradMode::kAccumulate is beta = 1. It multiplies in
// cross-correlation order (no filter flip), which is what deep learning calls convolution.
//
// Each (direction, shape, dtype, math) is measured once with cuDNN's Find, which times every
// algorithm that fits the workspace limit; the fastest is kept for the life of the backend.
// Math types: strict f32 is CUDNN_FMA_MATH (FMA-only kernels, no TF32); TF32 and f16/bf16
// allow tensor cores (CUDNN_TENSOR_OP_MATH); the compute type is always float.
//
// Each is then also timed as a cuBLASLt matrix product (cuda_conv_gemm.cu, im2col) against
// cuDNN's pick, both with CUDA events on the stream, and runs on whichever was faster.
//
// A batch of more than kConvMeasureBatch samples is measured on its first kConvMeasureBatch
// (Find, the product's timing, the fused graph), and the winner runs the whole batch: past a
// few hundred samples of these layers the GPU is full and the ranking holds, while Find's time
// grows with the batch (VGG16 fp16 at batch 2354 spent 107 s in Find, H100, 2026-11-27).
//
// Large batches run in slices of the batch. cuDNN describes a tensor with 32-bit numbers, so
// one of 2^31 elements or more cannot be described at all (VGG16 fp16 at batch 2511 failed in
// cudnnSetTensor4dDescriptor), and in fp16 an operand past 2^31 bytes leaves cuDNN 9.14 only
// slow engines: ResNet-50's stem backward-weights took 2.7 ms at batch 1280 and 3.1 s at 1344
// (H100, 2026-11-27). Samples are independent in forward and backward-data; backward-weights
// sums over them, so each later slice accumulates into dw (cuDNN's beta = 1). Slices differ by
// at most one sample, and a slice one sample smaller takes the larger one's choice rather than
// measuring every algorithm again on a tensor of a gigabyte or more.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine/backend/batch_slices.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {
namespace {

// Find's workspace: algorithms that need more are not considered. Large enough for every
// implicit-GEMM kernel of the model suite; capped by a share of the free memory so Find never
// fails where the run itself would fit.
constexpr std::size_t kFindWorkspaceLimit = std::size_t{512} << 20;
// Strict f32 has no tensor cores, and there FFT and Winograd kernels compete with implicit GEMM
// on large maps (U-Net's 512x512 layers) but want gigabytes of workspace; PyTorch's benchmark
// mode lets Find have as much as it can allocate.
constexpr std::size_t kStrictFindWorkspaceLimit = std::size_t{4} << 30;
constexpr int kFreeShareDivisor = 4;

// Where a ConvKey holds the batch (conv_plan builds keys in this order).
constexpr std::size_t kConvKeyBatch = 3;

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Runs per candidate when cuDNN and a matrix product compete for a shape, after one
// unmeasured run (which may plan or allocate).
constexpr int kChoiceRuns = 3;

// Seconds since construction, for the planning time's parts.
class WallTimer {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Mean device time of fn's work on the stream, in ms.
template <class F>
float mean_device_ms(cudaStream_t stream, F&& fn) {
  fn();
  Event start, stop;
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < kChoiceRuns; ++i) fn();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / kChoiceRuns;
}

cudnnMathType_t math_type(const Conv2dParams& p, DType dtype) {
  if (dtype == DType::kF32 && p.math == MathMode::kStrict) return CUDNN_FMA_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

std::size_t find_workspace_limit(const Conv2dParams& p, DType dtype) {
  return math_type(p, dtype) == CUDNN_FMA_MATH ? kStrictFindWorkspaceLimit : kFindWorkspaceLimit;
}

void set_nhwc(cudnnTensorDescriptor_t d, cudnnDataType_t t, std::int64_t n, std::int64_t c,
              std::int64_t h, std::int64_t w) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, t, static_cast<int>(n),
                                         static_cast<int>(c), static_cast<int>(h),
                                         static_cast<int>(w)));
}

std::unique_ptr<ConvPlan> make_descriptors(const Conv2dParams& p, DType dtype) {
  const cudnnDataType_t t = cudnn_dtype(dtype, "conv2d");
  auto plan = std::make_unique<ConvPlan>();
  set_nhwc(plan->x, t, p.n, p.c, p.h, p.w);
  set_nhwc(plan->y, t, p.n, p.k, p.out_h(), p.out_w());
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->w, t, CUDNN_TENSOR_NHWC, static_cast<int>(p.k),
                                         static_cast<int>(p.c), static_cast<int>(p.r),
                                         static_cast<int>(p.s)));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan->conv, p.pad_h, p.pad_w, p.stride_h, p.stride_w,
                                              p.dilation_h, p.dilation_w, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, math_type(p, dtype)));
  return plan;
}

// cuDNN's workspace for `algorithm` on the plan's descriptors; an error status where the
// algorithm cannot run them.
cudnnStatus_t workspace_size(cudnnHandle_t cudnn, ConvDirection direction, const ConvPlan& plan,
                             int algorithm, std::size_t* bytes) {
  switch (direction) {
    case ConvDirection::kForward:
      return cudnnGetConvolutionForwardWorkspaceSize(
          cudnn, plan.x, plan.w, plan.conv, plan.y,
          static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), bytes);
    case ConvDirection::kBackwardData:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(
          cudnn, plan.w, plan.y, plan.conv, plan.x,
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm), bytes);
    case ConvDirection::kBackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(
          cudnn, plan.x, plan.y, plan.conv, plan.w,
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

// The algorithms Find returned that ran successfully, fastest first (Find sorts by time); at
// least one.
template <class Perf>
std::vector<ConvPlan::Ranked> ranked(const std::vector<Perf>& results, int returned,
                                     const char* what) {
  std::vector<ConvPlan::Ranked> out;
  for (int i = 0; i < returned; ++i) {
    const Perf& r = results[static_cast<std::size_t>(i)];
    if (r.status == CUDNN_STATUS_SUCCESS)
      out.push_back({static_cast<int>(r.algo), r.mathType, r.memory});
  }
  if (out.empty())
    throw Error(ErrorKind::kExternal,
                std::string("cuDNN has no algorithm for this ") + what + " convolution",
                "check the cuDNN version with `dlbench info`");
  return out;
}

}  // namespace

const ConvPlan& CudaBackend::conv_plan(ConvDirection direction, const Conv2dParams& p, DType dtype,
                                       const ConvOperands& ops, GradMode output_mode,
                                       bool later_slice) {
  const ConvKey key = {static_cast<std::int64_t>(direction),
                       static_cast<std::int64_t>(dtype),
                       static_cast<std::int64_t>(math_type(p, dtype)),
                       p.n,
                       p.h,
                       p.w,
                       p.c,
                       p.k,
                       p.r,
                       p.s,
                       p.stride_h,
                       p.stride_w,
                       p.pad_h,
                       p.pad_w,
                       p.dilation_h,
                       p.dilation_w,
                       p.bias ? 1 : 0,
                       static_cast<std::int64_t>(p.activation),
                       p.residual ? 1 : 0,
                       p.statistics ? 1 : 0};
  if (auto it = conv_plans_.find(key); it != conv_plans_.end()) return *it->second;
  if (later_slice) {
    ConvKey larger = key;
    larger[kConvKeyBatch] = p.n + 1;
    if (auto it = conv_plans_.find(larger); it != conv_plans_.end())
      if (std::unique_ptr<ConvPlan> adopted = adopt_choice(direction, p, dtype, *it->second))
        return *conv_plans_.emplace(key, std::move(adopted)).first->second;
  }
  if (p.n > kConvMeasureBatch) {
    Conv2dParams head = p;
    head.n = kConvMeasureBatch;
    const ConvPlan& measured = conv_plan(direction, head, dtype, ops, output_mode, false);
    if (std::unique_ptr<ConvPlan> adopted = adopt_choice(direction, p, dtype, measured))
      return *conv_plans_.emplace(key, std::move(adopted)).first->second;
  }

  ++conv_plans_measured_;
  WallTimer find_timer;
  std::unique_ptr<ConvPlan> plan = make_descriptors(p, dtype);
  // One Find at a time in the process: with a thread per GPU, Finds running at once on two
  // H200s picked backward algorithms that ran 2.5x slower than those one GPU alone picks
  // (separate processes were not affected). Find runs only while shapes are new.
  static std::mutex find_mutex;
  std::lock_guard<std::mutex> find_lock(find_mutex);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // A memory limit imitates a smaller device: what it leaves is what is free.
  if (const std::size_t cap = allocator_.limit(); cap > 0)
    free_bytes = std::min(free_bytes, cap - std::min(cap, allocator_.bytes_in_use()));
  const std::size_t limit =
      std::min(find_workspace_limit(p, dtype), free_bytes / kFreeShareDivisor);
  Buffer find_workspace(allocator_, limit);
  // Find writes its output; when the call accumulates into it, Find writes into scratch.
  const std::size_t out_bytes =
      size_of(dtype) * static_cast<std::size_t>(
                           direction == ConvDirection::kForward        ? p.output_shape().numel()
                           : direction == ConvDirection::kBackwardData ? p.input_shape().numel()
                                                                       : p.weight_shape().numel());
  Buffer scratch_out;
  ConvOperands o = ops;
  if (output_mode == GradMode::kAccumulate) {
    scratch_out = Buffer(allocator_, out_bytes);
    void*& out = direction == ConvDirection::kForward        ? o.y
                 : direction == ConvDirection::kBackwardData ? o.x
                                                             : o.w;
    out = scratch_out.data();
  }
  if (direction == ConvDirection::kForward) {
    std::vector<cudnnConvolutionFwdAlgoPerf_t> results(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    int returned = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        cudnn_, plan->x, o.x, plan->w, o.w, plan->conv, plan->y, o.y,
        static_cast<int>(results.size()), &returned, results.data(), find_workspace.data(), limit));
    plan->ranked = ranked(results, returned, "forward");
  } else if (direction == ConvDirection::kBackwardData) {
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> results(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    int returned = 0;
    CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
        cudnn_, plan->w, o.w, plan->y, o.y, plan->conv, plan->x, o.x,
        static_cast<int>(results.size()), &returned, results.data(), find_workspace.data(), limit));
    plan->ranked = ranked(results, returned, "backward-data");
  } else {
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> results(
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    int returned = 0;
    CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        cudnn_, plan->x, o.x, plan->y, o.y, plan->conv, plan->w, o.w,
        static_cast<int>(results.size()), &returned, results.data(), find_workspace.data(), limit));
    plan->ranked = ranked(results, returned, "backward-weights");
  }
  const ConvPlan::Ranked& best = plan->ranked.front();
  plan->algorithm = best.algorithm;
  plan->workspace_bytes = best.workspace_bytes;
  // cuDNN asks that the math type of the winning result be set on the descriptor; strict f32
  // keeps FMA math whatever the result says, so TF32 can never slip in.
  if (math_type(p, dtype) != CUDNN_FMA_MATH)
    CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, best.math));
  find_seconds_ += find_timer.seconds();
  WallTimer product_timer;
  if (gemm_can_run(direction, p, dtype) && conv_route_ != ConvRoute::kCudnn) {
    float cudnn_ms = 0, gemm_ms = 0;  // 0: not measured (the product route is pinned)
    if (conv_route_ == ConvRoute::kGemm) {
      plan->gemm = true;
    } else {
      cudnn_ms = mean_device_ms(
          stream_, [&] { run_cudnn_conv(direction, *plan, o, find_workspace.data(), 0.0f); });
      gemm_ms = mean_device_ms(stream_, [&] { conv_gemm(direction, p, dtype, o, nullptr, 0.0f); });
      plan->gemm = gemm_ms < cudnn_ms;
    }
    conv_choices_.push_back({direction, p, dtype, cudnn_ms, gemm_ms, plan->gemm});
  }
  product_timing_seconds_ += product_timer.seconds();
  if (direction == ConvDirection::kForward &&
      (p.bias || p.residual || p.activation != Activation::kNone || p.statistics) &&
      conv_route_ == ConvRoute::kMeasured) {
    WallTimer fused_timer;
    choose_fused_forward(*plan, p, dtype, o);
    fused_graph_seconds_ += fused_timer.seconds();
  }
  return *conv_plans_.emplace(key, std::move(plan)).first->second;
}

std::unique_ptr<ConvPlan> CudaBackend::adopt_choice(ConvDirection direction, const Conv2dParams& p,
                                                    DType dtype, const ConvPlan& larger) {
  std::unique_ptr<ConvPlan> plan = make_descriptors(p, dtype);
  // Find kept to find_workspace_limit at its size; an algorithm whose workspace grows with the
  // batch may pass it here, so the fastest that stays within it wins.
  bool chosen = false;
  for (const ConvPlan::Ranked& candidate : larger.ranked) {
    if (math_type(p, dtype) != CUDNN_FMA_MATH)
      CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, candidate.math));
    plan->algorithm = candidate.algorithm;
    chosen = workspace_size(cudnn_, direction, *plan, candidate.algorithm,
                            &plan->workspace_bytes) == CUDNN_STATUS_SUCCESS &&
             plan->workspace_bytes <= find_workspace_limit(p, dtype);
    if (chosen) break;
  }
  if (!chosen) return nullptr;
  plan->ranked = larger.ranked;
  plan->gemm = larger.gemm && gemm_can_run(direction, p, dtype);  // else cuDNN's best
  if (larger.fused) {
    WallTimer fused_timer;
    const std::size_t route_bytes = plan->gemm ? 0 : plan->workspace_bytes;
    auto fused =
        std::make_unique<FusedConvForward>(cudnn_, p, dtype, fused_workspace_limit(route_bytes));
    if (fused->ok()) plan->fused = std::move(fused);
    fused_graph_seconds_ += fused_timer.seconds();
  }
  return plan;
}

PlanningTime CudaBackend::planning_time() const {
  PlanningTime t;
  t.shapes = conv_plans_measured_;
  t.parts = {{"cudnn_find", "cuDNN Find", find_seconds_},
             {"product_timing", "matrix-product timing", product_timing_seconds_},
             {"fused_graphs", "fused cuDNN graphs", fused_graph_seconds_}};
  return t;
}

std::size_t CudaBackend::fused_workspace_limit(std::size_t route_bytes) const {
  return std::min(kFindWorkspaceLimit, std::max(workspace_.bytes(), route_bytes));
}

// The route chosen above plus its epilogue pass against cuDNN's fused graph, where it has one;
// the bias values do not change the time, so a scratch bias stands in. The unfused route runs
// first, so the workspace then holds what it needs.
void CudaBackend::choose_fused_forward(ConvPlan& plan, const Conv2dParams& p, DType dtype,
                                       const ConvOperands& o) {
  Buffer bias(allocator_, std::max<std::size_t>(size_of(dtype) * static_cast<std::size_t>(p.k), 1));
  const void* b = p.bias ? bias.data() : nullptr;
  Buffer statistics(allocator_,
                    sizeof(float) * static_cast<std::size_t>(p.statistics ? 2 * p.k : 1));
  auto* stats = p.statistics ? static_cast<float*>(statistics.data()) : nullptr;
  const float unfused_ms = mean_device_ms(stream_, [&] {
    run_forward(plan, p, dtype, o, b, nullptr);
    if (stats) channel_statistics(o.y, dtype, p.n * p.out_h() * p.out_w(), p.k, stats);
  });
  auto fused = std::make_unique<FusedConvForward>(cudnn_, p, dtype, fused_workspace_limit(0));
  if (!fused->ok() || !fused->takes(o.x, o.w, b, o.r, o.y, stats)) return;
  const float fused_ms = mean_device_ms(stream_, [&] {
    fused->run(cudnn_, o.x, o.w, b, o.r, o.y, workspace(fused->workspace_bytes()), stats);
  });
  if (fused_ms < unfused_ms) plan.fused = std::move(fused);
}

bool CudaBackend::run_forward(const ConvPlan& plan, const Conv2dParams& p, DType dtype,
                              const ConvOperands& o, const void* bias, float* statistics) {
  // The fused plan wants 16-byte aligned tensors; a later batch slice of an odd-sized sample
  // may start elsewhere, and takes the plan's other route.
  if (plan.fused && plan.fused->takes(o.x, o.w, bias, o.r, o.y, statistics)) {
    plan.fused->run(cudnn_, o.x, o.w, bias, o.r, o.y, workspace(plan.fused->workspace_bytes()),
                    p.statistics ? statistics : nullptr);
    return p.statistics;
  }
  if (plan.gemm) {  // the bias, the residual and the ReLU ride in cuBLASLt's epilogue
    conv_gemm(ConvDirection::kForward, p, dtype, o, bias, kZero);
    return false;
  }
  run_cudnn_conv(ConvDirection::kForward, plan, o, workspace(plan.workspace_bytes), kZero);
  // Then the bias, the residual and the ReLU together, in one pass over y.
  bias_activation(o.y, bias, o.r, p.n * p.out_h() * p.out_w(), p.k, p.activation, dtype);
  return false;
}

void CudaBackend::run_cudnn_conv(ConvDirection direction, const ConvPlan& plan,
                                 const ConvOperands& o, void* ws, float beta) {
  switch (direction) {
    case ConvDirection::kForward:
      CUDNN_CHECK(cudnnConvolutionForward(cudnn_, &kOne, plan.x, o.x, plan.w, o.w, plan.conv,
                                          static_cast<cudnnConvolutionFwdAlgo_t>(plan.algorithm),
                                          ws, plan.workspace_bytes, &beta, plan.y, o.y));
      break;
    case ConvDirection::kBackwardData:
      CUDNN_CHECK(
          cudnnConvolutionBackwardData(cudnn_, &kOne, plan.w, o.w, plan.y, o.y, plan.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algorithm),
                                       ws, plan.workspace_bytes, &beta, plan.x, o.x));
      break;
    case ConvDirection::kBackwardFilter:
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(
          cudnn_, &kOne, plan.x, o.x, plan.y, o.y, plan.conv,
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algorithm), ws, plan.workspace_bytes,
          &beta, plan.w, o.w));
      break;
  }
}

void CudaBackend::for_each_batch_slice(
    const Conv2dParams& p, DType dtype, const ConvOperands& o,
    const std::function<void(const Conv2dParams&, const ConvOperands&, std::size_t)>& run) {
  const std::size_t x_sample = size_of(dtype) * static_cast<std::size_t>(p.c * p.h * p.w);
  const std::size_t y_sample =
      size_of(dtype) * static_cast<std::size_t>(p.k * p.out_h() * p.out_w());
  const std::vector<std::int64_t> slices =
      batch_slices(p.n, std::max(x_sample, y_sample), conv_slice_bytes_);
  std::size_t first = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    Conv2dParams ps = p;
    ps.n = slices[i];
    const ConvOperands os = {
        static_cast<char*>(o.x) + first * x_sample, o.w, static_cast<char*>(o.y) + first * y_sample,
        o.r != nullptr ? static_cast<const char*>(o.r) + first * y_sample : nullptr};
    run(ps, os, i);
    first += static_cast<std::size_t>(ps.n);
  }
}

void CudaBackend::conv2d_forward_impl(const Conv2dParams& p, const Tensor& x, const Tensor& w,
                                      const Tensor& bias, const Tensor& y, const Tensor& residual,
                                      const Tensor& statistics) {
  const char* op = "conv2d_forward";
  activate();
  require_float(x, op, "x"), require_here(x, op, "x"), require_here(w, op, "w");
  require_here(y, op, "y");
  if (p.bias) require_here(bias, op, "bias");
  if (p.residual) require_here(residual, op, "residual");
  if (p.statistics) require_here(statistics, op, "statistics");
  const DType dtype = x.dtype();
  auto* stats = p.statistics ? statistics.data_as<float>() : nullptr;
  // A fused plan writes the statistics of the slice it ran; they are the whole batch's only
  // when there was one slice.
  bool slices_written = true;
  auto slice = [&](const Conv2dParams& ps, const ConvOperands& o, std::size_t index) {
    const ConvPlan& plan =
        conv_plan(ConvDirection::kForward, ps, dtype, o, GradMode::kOverwrite, index > 0);
    const bool written = run_forward(plan, ps, dtype, o, p.bias ? bias.data() : nullptr, stats);
    slices_written = slices_written && written && index == 0;
  };
  for_each_batch_slice(p, dtype, {x.data(), w.data(), y.data(), residual.data()}, slice);
  if (stats != nullptr && !slices_written)
    channel_statistics(y.data(), dtype, p.n * p.out_h() * p.out_w(), p.k, stats);
}

void CudaBackend::conv2d_backward_data_impl(const Conv2dParams& p, const Tensor& dy,
                                            const Tensor& w, const Tensor& dx, GradMode mode) {
  const char* op = "conv2d_backward_data";
  activate();
  require_float(dy, op, "dy"), require_here(dy, op, "dy"), require_here(w, op, "w");
  require_here(dx, op, "dx");
  const DType dtype = dy.dtype();
  const float beta = mode == GradMode::kAccumulate ? kOne : kZero;
  auto slice = [&](const Conv2dParams& ps, const ConvOperands& o, std::size_t index) {
    const ConvPlan& plan = conv_plan(ConvDirection::kBackwardData, ps, dtype, o, mode, index > 0);
    if (plan.gemm)
      conv_gemm(ConvDirection::kBackwardData, ps, dtype, o, nullptr, beta);
    else
      run_cudnn_conv(ConvDirection::kBackwardData, plan, o, workspace(plan.workspace_bytes), beta);
  };
  // Operands in forward naming: x is the output here (dx), y the input (dy).
  for_each_batch_slice(p, dtype, {dx.data(), w.data(), dy.data()}, slice);
}

void CudaBackend::conv2d_backward_weights_impl(const Conv2dParams& p, const Tensor& x,
                                               const Tensor& dy, const Tensor& dw,
                                               const Tensor& dbias, GradMode mode) {
  const char* op = "conv2d_backward_weights";
  activate();
  require_float(x, op, "x"), require_same_dtype(x, dw, op, "dw");
  require_here(x, op, "x"), require_here(dy, op, "dy"), require_here(dw, op, "dw");
  const DType dtype = x.dtype();
  // The first slice writes dw as the call asks; every later one adds its samples' share.
  auto slice = [&](const Conv2dParams& ps, const ConvOperands& o, std::size_t index) {
    const GradMode slice_mode = index == 0 ? mode : GradMode::kAccumulate;
    const ConvPlan& plan =
        conv_plan(ConvDirection::kBackwardFilter, ps, dtype, o, slice_mode, index > 0);
    const float beta = slice_mode == GradMode::kAccumulate ? kOne : kZero;
    if (plan.gemm)
      conv_gemm(ConvDirection::kBackwardFilter, ps, dtype, o, nullptr, beta);
    else
      run_cudnn_conv(ConvDirection::kBackwardFilter, plan, o, workspace(plan.workspace_bytes),
                     beta);
  };
  for_each_batch_slice(p, dtype, {x.data(), dw.data(), dy.data()}, slice);
  if (p.bias) {
    require_here(dbias, op, "dbias");
    column_sums(dy, p.n * p.out_h() * p.out_w(), p.k, dbias, mode, op);
  }
}

}  // namespace dlbench::backend::cuda
