// Convolution on cuDNN, planning: forward, backward-data and backward-weights, 2D (NHWC) and 3D
// (NDHWC, one more sum over the depth below); cuda_conv_run.cc runs what is planned here.
//
//   y[n, p, q, k]  = b[k] + sum_{r, s, c} x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c] w[k, r, s, c]
//   dx[n, h, w, c] = sum over the (p, q, r, s, k) that read x[n, h, w, c] of dy[n, p, q, k] w[k, r,
//   s, c] dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
//   db[k]          = sum_{n, p, q} dy[n, p, q, k]
// A ReLU epilogue (ConvParams::activation) applies max(y, 0) after the bias and the residual
// (ConvParams::residual, inference's folded residual tail): in cuBLASLt's epilogue on the
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
// cuDNN's pick, both with CUDA events on the stream, and runs on whichever was faster. Strict
// f32 backward passes then also time the engines of cuDNN's graph API (cudnn_graph_conv.h),
// which the legacy Find does not reach, against that choice.
//
// A forward or backward-weights pass over fewer than 8 input channels (a network's first
// layer) is also timed on its input padded with zero channels to 4 and to 8, the copy
// included (cuda_conv_padded.cu), and runs at the fastest width (padded_channels). It is timed
// on the whole batch, and the copy's memory limits keep that to batches of a few hundred
// images at 224x224 (so the head rule below does not apply to it). ResNet's stem forward and
// weight gradient in f16 and bf16 are then timed on our own kernels against that choice
// (cuda_conv_stem.cu: stem_route).
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
// A padded input's copy may add at most this share of what the backend holds when the shape is
// first seen (activations, weights, workspace): 2 %, under #17's bound of 5 % on any row's peak.
// A training step holds gigabytes (ResNet-50 fp16 at batch 256: 11.3 GiB, the copy 103 MB); an
// inference step little (1.65 GiB), where the copy would add 6-12 % for about 0.1 ms.
constexpr std::size_t kPaddedShareDivisor = 50;

// Where a ConvKey holds the batch (conv_plan builds keys in this order).
constexpr std::size_t kConvKeyBatch = 3;  // then the rest of ConvParams::fields()

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// The graph route times one run per candidate after its unmeasured one: strict-f32 3D passes
// take up to 200 ms a run on their slow engines, and three runs each made 3D U-Net's first step
// take 110 s (H200, 2026-11-28); one run still separates engines that differ by 2x or more.
constexpr int kGraphRouteRuns = 1;

// Seconds since construction, for the planning time's parts.
class WallTimer {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

cudnnMathType_t math_type(const ConvParams& p, DType dtype) {
  if (dtype == DType::kF32 && p.math == MathMode::kStrict) return CUDNN_FMA_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

std::size_t find_workspace_limit(const ConvParams& p, DType dtype) {
  return math_type(p, dtype) == CUDNN_FMA_MATH ? kStrictFindWorkspaceLimit : kFindWorkspaceLimit;
}

// cuDNN's legacy Nd descriptors take int arrays; ConvParams gives 64-bit ones. Channels-last
// tensors are logical [N, C, (D,) H, W] dims with the NHWC format, which means NDHWC for five.
std::vector<int> ints(const std::vector<std::int64_t>& v) {
  return {v.begin(), v.end()};
}

void set_channels_last(cudnnTensorDescriptor_t desc, cudnnDataType_t t,
                       const std::vector<int>& dims) {
  CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(desc, CUDNN_TENSOR_NHWC, t,
                                           static_cast<int>(dims.size()), dims.data()));
}

std::unique_ptr<ConvPlan> make_descriptors(const ConvParams& p, DType dtype) {
  const cudnnDataType_t t = cudnn_dtype(dtype, "convolution");
  auto plan = std::make_unique<ConvPlan>();
  set_channels_last(plan->x, t, ints(p.logical_input_dims()));
  set_channels_last(plan->y, t, ints(p.logical_output_dims()));
  const std::vector<int> filter = ints(p.logical_weight_dims());
  CUDNN_CHECK(cudnnSetFilterNdDescriptor(plan->w, t, CUDNN_TENSOR_NHWC,
                                         static_cast<int>(filter.size()), filter.data()));
  const std::vector<int> pads = ints(p.spatial_pads()), strides = ints(p.spatial_strides()),
                         dilations = ints(p.spatial_dilations());
  CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(pads.size()),
                                              pads.data(), strides.data(), dilations.data(),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
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

// The widths a convolution's input channels may be padded to (cuda_conv_padded.cu): whole
// 8- and 16-byte rows in f16/bf16.
constexpr std::int64_t kPaddedWidths[] = {4, 8};

}  // namespace

// Candidates compete over 3 runs each (search_ms's default) after their unmeasured one, which
// may plan or allocate. While one runs (searches_), its scratch requests are the search's.
float CudaBackend::search_ms(const std::function<void()>& work, int runs) {
  struct Searching {
    int& depth;
    explicit Searching(int& d) : depth(++d) {}
    ~Searching() { --depth; }
  } searching(searches_);
  work();
  Event start, stop;
  CUDA_CHECK(cudaEventRecord(start, stream_));
  for (int i = 0; i < runs; ++i) work();
  CUDA_CHECK(cudaEventRecord(stop, stream_));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / static_cast<float>(runs);
}

ConvKey conv_key(ConvDirection direction, const ConvParams& p, DType dtype) {
  ConvKey key{static_cast<std::int64_t>(direction), static_cast<std::int64_t>(dtype),
              static_cast<std::int64_t>(math_type(p, dtype))};
  const auto fields = p.fields();
  std::copy(fields.begin(), fields.end(), key.begin() + kConvKeyBatch);
  return key;
}

const ConvPlan& CudaBackend::conv_plan(ConvDirection direction, const ConvParams& p, DType dtype,
                                       const ConvOperands& ops, GradMode output_mode,
                                       bool later_slice) {
  const ConvKey key = conv_key(direction, p, dtype);
  if (auto it = conv_plans_.find(key); it != conv_plans_.end()) return *it->second;
  if (later_slice) {
    ConvKey larger = key;
    larger[kConvKeyBatch] = p.n + 1;
    if (auto it = conv_plans_.find(larger); it != conv_plans_.end())
      if (std::unique_ptr<ConvPlan> adopted = adopt_choice(direction, p, dtype, *it->second))
        return *conv_plans_.emplace(key, std::move(adopted)).first->second;
  }
  if (p.n > kConvMeasureBatch) {
    ConvParams head = p;
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
  if (gemm_can_run(direction, p, dtype) && conv_route_ != ConvRoute::kCudnn &&
      conv_route_ != ConvRoute::kGraph) {
    float cudnn_ms = 0, gemm_ms = 0;  // 0: not measured (the product route is pinned)
    if (conv_route_ == ConvRoute::kGemm) {
      plan->gemm = true;
    } else {
      cudnn_ms =
          search_ms([&] { run_cudnn_conv(direction, *plan, o, find_workspace.data(), 0.0f); });
      gemm_ms = search_ms([&] { conv_gemm(direction, p, dtype, o, nullptr, 0.0f); });
      plan->gemm = gemm_ms < cudnn_ms;
    }
    conv_choices_.push_back({direction, p, dtype, cudnn_ms, gemm_ms, plan->gemm});
  }
  product_timing_seconds_ += product_timer.seconds();
  // Measured, the graph API's engines compete for the backward passes only: with its forward
  // engines too, ResNet-50's fp32 stem weight gradient came out 1.08e-3 from the CPU's where
  // every other route stays within 3e-4 (H200, 2026-11-29, tests/gpu/network_gpu_test.cc: 5 of
  // 8 runs past the test's 1e-3 with forward engines, 5 of 5 within it without them).
  if (conv_route_ == ConvRoute::kGraph ||
      (measures_routes() && math_type(p, dtype) == CUDNN_FMA_MATH &&
       direction != ConvDirection::kForward)) {
    WallTimer graph_timer;
    choose_graph_route(direction, *plan, p, dtype, o, find_workspace.data(), limit);
    graph_route_seconds_ += graph_timer.seconds();
  }
  if (direction == ConvDirection::kForward && !p.volumetric() &&
      (p.bias || p.residual || p.activation != Activation::kNone || p.statistics) &&
      measures_routes()) {
    WallTimer fused_timer;
    choose_fused_forward(*plan, p, dtype, o);
    fused_graph_seconds_ += fused_timer.seconds();
  }
  return *conv_plans_.emplace(key, std::move(plan)).first->second;
}

std::unique_ptr<ConvPlan> CudaBackend::adopt_choice(ConvDirection direction, const ConvParams& p,
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

std::int64_t CudaBackend::padded_channels(ConvDirection direction, const ConvParams& p, DType dtype,
                                          const std::function<void(std::int64_t)>& run) {
  // Backward-data writes x's gradient, which has no use for padding.
  if (p.c >= std::end(kPaddedWidths)[-1] || direction == ConvDirection::kBackwardData ||
      !measures_routes())
    return p.c;
  const ConvKey key = conv_key(direction, p, dtype);
  if (auto it = padded_channels_.find(key); it != padded_channels_.end()) return it->second;
  WallTimer timer;
  const double planning_before = planning_time().seconds();
  // The padded copy of x is kept to Find's share of the free memory, so that a batch near the
  // device's limit keeps its memory for what it must hold, and, unless padding is pinned, to a
  // small share of what the backend holds.
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (const std::size_t cap = allocator_.limit(); cap > 0)
    free_bytes = std::min(free_bytes, cap - std::min(cap, allocator_.bytes_in_use()));
  const bool pinned = conv_route_ == ConvRoute::kPadded;
  std::size_t limit = std::min(kFindWorkspaceLimit, free_bytes / kFreeShareDivisor);
  if (!pinned) limit = std::min(limit, allocator_.bytes_in_use() / kPaddedShareDivisor);
  PaddingChoice choice{direction, p, dtype, 0.0f, {}, p.c};
  for (const std::int64_t width : kPaddedWidths)
    if (width > p.c && padded_operand_bytes(p, dtype, width) <= limit)
      choice.padded_ms.push_back({width, 0.0f});
  if (!choice.padded_ms.empty()) {
    // Each route's first run (unmeasured) plans its shape; the copies count in the padded times.
    // Pinned, the times are taken for the timing tool and the narrowest width runs.
    choice.unpadded_ms = search_ms([&] { run(p.c); });
    float best = choice.unpadded_ms;
    for (auto& [width, ms] : choice.padded_ms) {
      ms = search_ms([&] { run(width); });
      if (ms < best) best = ms, choice.channels = width;
    }
    if (pinned) choice.channels = choice.padded_ms.front().first;
  }
  padded_channels_.emplace(key, choice.channels);
  if (!choice.padded_ms.empty()) padding_choices_.push_back(choice);
  fit_padded_operands();
  // The planning of the shapes timed here counts in its own parts.
  padding_seconds_ += timer.seconds() - (planning_time().seconds() - planning_before);
  return choice.channels;
}

void CudaBackend::fit_padded_operands() {
  // ResNet-50's fp16 stem: 206 MB at 8 channels against 103 MB at 4. Reallocated here, at its
  // size, not left for the next pass to allocate: that pass may be inside a graph recording.
  std::size_t needed = 0;
  for (const PaddingChoice& c : padding_choices_) {
    const auto stem = stem_routes_.find(conv_key(c.direction, c.params, c.dtype));
    if (c.channels != c.params.c && (stem == stem_routes_.end() || !stem->second))
      needed = std::max(needed, padded_operand_bytes(c.params, c.dtype, c.channels));
  }
  if (padded_operands_.buffer.bytes() > needed) {
    ++workspace_generation_;  // as scratch() does when a buffer goes
    padded_operands_.buffer = Buffer();
    if (needed > 0) padded_operands_.buffer = Buffer(allocator_, needed);
  }
}

PlanningTime CudaBackend::planning_time() const {
  PlanningTime t;
  t.shapes = conv_plans_measured_;
  t.parts = {{"cudnn_find", "cuDNN Find", find_seconds_},
             {"product_timing", "matrix-product timing", product_timing_seconds_},
             {"fused_graphs", "fused cuDNN graphs", fused_graph_seconds_},
             {"graph_route", "cuDNN graph-API engines", graph_route_seconds_},
             {"channel_padding", "padded input channels", padding_seconds_},
             {"stem_kernel", "stem kernel", stem_seconds_}};
  return t;
}

std::size_t CudaBackend::fused_workspace_limit(std::size_t route_bytes) const {
  return std::min(kFindWorkspaceLimit, std::max(workspace_.buffer.bytes(), route_bytes));
}

// The route chosen above plus its epilogue pass against cuDNN's fused graph, where it has one;
// the bias values do not change the time, so a scratch bias stands in. The unfused route runs
// first, so the workspace then holds what it needs.
void CudaBackend::choose_fused_forward(ConvPlan& plan, const ConvParams& p, DType dtype,
                                       const ConvOperands& o) {
  Buffer bias(allocator_, std::max<std::size_t>(size_of(dtype) * static_cast<std::size_t>(p.k), 1));
  const void* b = p.bias ? bias.data() : nullptr;
  Buffer statistics(allocator_,
                    sizeof(float) * static_cast<std::size_t>(p.statistics ? 2 * p.k : 1));
  auto* stats = p.statistics ? static_cast<float*>(statistics.data()) : nullptr;
  const float unfused_ms = search_ms([&] {
    run_forward(plan, p, dtype, o, b, nullptr);
    if (stats) channel_statistics(o.y, dtype, p.output_rows(), p.k, stats);
  });
  auto fused = std::make_unique<FusedConvForward>(cudnn_, p, dtype, fused_workspace_limit(0));
  if (!fused->ok() || !fused->takes(o.x, o.w, b, o.r, o.y, stats)) return;
  const float fused_ms = search_ms([&] {
    fused->run(cudnn_, o.x, o.w, b, o.r, o.y, workspace(fused->workspace_bytes()), stats);
  });
  if (fused_ms < unfused_ms) plan.fused = std::move(fused);
}

void CudaBackend::choose_graph_route(ConvDirection direction, ConvPlan& plan, const ConvParams& p,
                                     DType dtype, const ConvOperands& o, void* ws,
                                     std::size_t limit) {
  const bool pinned = conv_route_ == ConvRoute::kGraph;
  // The route so far (Find's algorithm or the product), timed as the graph's engines are.
  const float route_ms =
      pinned ? 0.0f
             : search_ms([&] { run_plain(direction, plan, p, dtype, o, kZero); }, kGraphRouteRuns);
  auto graph = std::make_unique<GraphConv>(
      cudnn_, direction, p, dtype, limit, o.x, o.w, o.y, ws,
      [&](const std::function<void()>& work) { return search_ms(work, kGraphRouteRuns); });
  if (!graph->ok() || (!pinned && graph->best_ms() >= route_ms)) return;
  plan.graph = std::move(graph);
  plan.gemm = false;
  ++graph_routes_;
}

}  // namespace dlbench::backend::cuda
