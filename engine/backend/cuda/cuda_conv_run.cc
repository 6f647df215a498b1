// Running planned convolutions: the doors (forward, backward-data, backward-weights), the batch
// slices they run in (on padded input channels where that measured faster, cuda_conv_padded.cu;
// ResNet's stem forward and weight gradient on our own kernels where that did, cuda_conv_stem.cu
// and cuda_conv_stem_wgrad.cu),
// and each pass on the route its plan chose (the graph API's engine, the
// matrix product or Find's algorithm; a forward's bias, residual and ReLU after it, or a fused
// graph with them). cuda_conv.cc plans: it measures the routes and keeps the fastest.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/backend/batch_slices.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

}  // namespace

void CudaBackend::run_plain(ConvDirection direction, const ConvPlan& plan, const ConvParams& p,
                            DType dtype, const ConvOperands& o, float beta) {
  // The graph's plan wants 16-byte aligned tensors and may lack an accumulating twin; then the
  // pass takes Find's algorithm.
  if (plan.graph &&
      plan.graph->run(cudnn_, o.x, o.w, o.y, workspace(plan.graph->workspace_bytes()), beta))
    return;
  if (plan.gemm)
    conv_gemm(direction, p, dtype, o, nullptr, beta);
  else
    run_cudnn_conv(direction, plan, o, workspace(plan.workspace_bytes), beta);
}

bool CudaBackend::run_forward(const ConvPlan& plan, const ConvParams& p, DType dtype,
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
  run_plain(ConvDirection::kForward, plan, p, dtype, o, kZero);
  // Then the bias, the residual and the ReLU together, in one pass over y.
  bias_activation(o.y, bias, o.r, p.output_rows(), p.k, p.activation, dtype);
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
    const ConvParams& p, DType dtype, const ConvOperands& o,
    const std::function<void(const ConvParams&, const ConvOperands&, std::size_t)>& run) {
  const std::size_t x_sample = size_of(dtype) * static_cast<std::size_t>(p.c * p.in_positions());
  const std::size_t y_sample = size_of(dtype) * static_cast<std::size_t>(p.k * p.out_positions());
  const std::vector<std::int64_t> slices =
      batch_slices(p.n, std::max(x_sample, y_sample), conv_slice_bytes_);
  std::size_t first = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    ConvParams ps = p;
    ps.n = slices[i];
    const ConvOperands os = {
        static_cast<char*>(o.x) + first * x_sample, o.w, static_cast<char*>(o.y) + first * y_sample,
        o.r != nullptr ? static_cast<const char*>(o.r) + first * y_sample : nullptr};
    run(ps, os, i);
    first += static_cast<std::size_t>(ps.n);
  }
}

void CudaBackend::conv_forward_impl(const ConvParams& p, const Tensor& x, const Tensor& w,
                                    const Tensor& bias, const Tensor& y, const Tensor& residual,
                                    const Tensor& statistics) {
  const char* op = "conv_forward";
  activate();
  require_float(x, op, "x"), require_here(x, op, "x"), require_here(w, op, "w");
  require_here(y, op, "y");
  if (p.bias) require_here(bias, op, "bias");
  if (p.residual) require_here(residual, op, "residual");
  if (p.statistics) require_here(statistics, op, "statistics");
  const DType dtype = x.dtype();
  const ConvOperands o{x.data(), w.data(), y.data(), residual.data()};
  const void* b = p.bias ? bias.data() : nullptr;
  auto* stats = p.statistics ? statistics.data_as<float>() : nullptr;
  // Timing writes y and the statistics, which the call overwrites anyway; a y written over the
  // residual it reads would change with every timed run, so that forward keeps its channels.
  const bool in_place = p.residual && o.y == o.r;
  const std::int64_t channels =
      in_place ? p.c : padded_channels(ConvDirection::kForward, p, dtype, [&](std::int64_t c) {
        forward_on_channels(c, p, dtype, o, b, stats);
      });
  // ResNet's stem may run faster on our own kernel than on the route chosen so far. Both write
  // only y and the statistics.
  if (stem_route(
          ConvDirection::kForward, p, dtype, o,
          [&] { forward_on_channels(channels, p, dtype, o, b, stats); },
          [&] { stem_forward(p, dtype, o, b, stats); }))
    return stem_forward(p, dtype, o, b, stats);
  forward_on_channels(channels, p, dtype, o, b, stats);
}

void CudaBackend::forward_slices(const ConvParams& p, DType dtype, const ConvOperands& o,
                                 const void* bias, float* stats) {
  // A fused plan writes the statistics of the slice it ran; they are the whole batch's only
  // when there was one slice.
  bool slices_written = true;
  auto slice = [&](const ConvParams& ps, const ConvOperands& os, std::size_t index) {
    const ConvPlan& plan =
        conv_plan(ConvDirection::kForward, ps, dtype, os, GradMode::kOverwrite, index > 0);
    const bool written = run_forward(plan, ps, dtype, os, bias, stats);
    slices_written = slices_written && written && index == 0;
  };
  for_each_batch_slice(p, dtype, o, slice);
  if (stats != nullptr && !slices_written)
    channel_statistics(o.y, dtype, p.output_rows(), p.k, stats);
}

void CudaBackend::conv_backward_data_impl(const ConvParams& p, const Tensor& dy, const Tensor& w,
                                          const Tensor& dx, GradMode mode) {
  const char* op = "conv_backward_data";
  activate();
  require_float(dy, op, "dy"), require_here(dy, op, "dy"), require_here(w, op, "w");
  require_here(dx, op, "dx");
  const DType dtype = dy.dtype();
  const float beta = mode == GradMode::kAccumulate ? kOne : kZero;
  auto slice = [&](const ConvParams& ps, const ConvOperands& o, std::size_t index) {
    const ConvPlan& plan = conv_plan(ConvDirection::kBackwardData, ps, dtype, o, mode, index > 0);
    run_plain(ConvDirection::kBackwardData, plan, ps, dtype, o, beta);
  };
  // Operands in forward naming: x is the output here (dx), y the input (dy).
  for_each_batch_slice(p, dtype, {dx.data(), w.data(), dy.data()}, slice);
}

void CudaBackend::conv_backward_weights_impl(const ConvParams& p, const Tensor& x, const Tensor& dy,
                                             const Tensor& dw, const Tensor& dbias, GradMode mode) {
  const char* op = "conv_backward_weights";
  activate();
  require_float(x, op, "x"), require_same_dtype(x, dw, op, "dw");
  require_here(x, op, "x"), require_here(dy, op, "dy"), require_here(dw, op, "dw");
  const DType dtype = x.dtype();
  // Timing overwrites a scratch dw: adding to dw would add once for every timed run.
  Buffer timing_dw;
  auto timing = [&] {
    if (timing_dw.bytes() == 0) timing_dw = Buffer(allocator_, dw.bytes());
    return ConvOperands{x.data(), timing_dw.data(), dy.data()};
  };
  const std::int64_t channels =
      padded_channels(ConvDirection::kBackwardFilter, p, dtype, [&](std::int64_t c) {
        backward_weights_on_channels(c, p, dtype, timing(), GradMode::kOverwrite);
      });
  const ConvOperands o{x.data(), dw.data(), dy.data()};
  // ResNet's stem may run faster on our own kernel than on the route chosen so far.
  if (stem_route(
          ConvDirection::kBackwardFilter, p, dtype, o,
          [&] { backward_weights_on_channels(channels, p, dtype, timing(), GradMode::kOverwrite); },
          [&] { stem_backward_weights(p, dtype, timing(), GradMode::kOverwrite); }))
    stem_backward_weights(p, dtype, o, mode);
  else
    backward_weights_on_channels(channels, p, dtype, o, mode);
  if (p.bias) {
    require_here(dbias, op, "dbias");
    column_sums(dy, p.output_rows(), p.k, dbias, mode, op);
  }
}

void CudaBackend::backward_weights_slices(const ConvParams& p, DType dtype, const ConvOperands& o,
                                          GradMode mode) {
  // The first slice writes dw as the call asks; every later one adds its samples' share.
  auto slice = [&](const ConvParams& ps, const ConvOperands& os, std::size_t index) {
    const GradMode slice_mode = index == 0 ? mode : GradMode::kAccumulate;
    const ConvPlan& plan =
        conv_plan(ConvDirection::kBackwardFilter, ps, dtype, os, slice_mode, index > 0);
    const float beta = slice_mode == GradMode::kAccumulate ? kOne : kZero;
    run_plain(ConvDirection::kBackwardFilter, plan, ps, dtype, os, beta);
  };
  for_each_batch_slice(p, dtype, o, slice);
}

}  // namespace dlbench::backend::cuda
