// 1x1 convolutions as cuBLASLt matrix products over the pixels.
//
// A 1x1 convolution without padding or dilation reads one pixel per output: in NHWC with KRSC
// (= [K, C]) weights it is the matmul of cuda_matmul.cc with m = N P Q pixels, k = C, n = K:
//   forward:          y[m, K]  = xs[m, C] · W[K, C]ᵀ (+ b)
//   backward-data:    dxs[m, C] = dy[m, K] · W[K, C]
//   backward-weights: dW[K, C] = dy[m, K]ᵀ · xs[m, C]
// where xs is x itself at stride 1. At stride > 1 (ResNet's downsampling shortcuts) xs is x
// subsampled: rows (n, p, q) of x at (n, p sh, q sw), gathered into the workspace first; the
// data gradient is computed into the workspace and spread back to those positions of dx,
// zeros elsewhere (or added there, leaving the rest, when dx accumulates).
//
// Why: cuDNN's FMA (strict f32) kernels for NHWC run 1x1 shapes at a fraction of what a
// single-precision GEMM reaches, and two ResNet-50 shapes pathologically (2026-11-22, H100:
// 56-66 ms for a backward that a GEMM does in about 2). The choice between the two is made
// per shape by measurement in cuda_conv.cc, so shapes where cuDNN is faster stay on cuDNN.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

// The subsampling of a strided 1x1 convolution, narrowed to int for the kernels.
struct Subsample {
  int h, w, out_h, out_w, stride_h, stride_w;
};

// Row of x (n, p sh, q sw) that subsampled row (n, p, q) reads.
__device__ __forceinline__ std::int64_t source_row(std::int64_t row, const Subsample& s) {
  const std::int64_t q = row % s.out_w, t = row / s.out_w;
  const std::int64_t p = t % s.out_h, n = t / s.out_h;
  return (n * s.h + p * s.stride_h) * s.w + q * s.stride_w;
}

// out[row] = x[source_row(row)], kVec channels per thread; rows x packs threads.
template <class T, int kVec>
__global__ void gather_kernel(const T* x, T* out, Subsample s, std::int64_t rows, int packs) {
  const std::int64_t total = rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t channels = static_cast<std::int64_t>(packs) * kVec;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    const std::int64_t row = i / packs, c = (i % packs) * kVec;
    store(out + row * channels + c, load<T, kVec>(x + source_row(row, s) * channels + c));
  }
}

// dx = the subsampled gradient g at the positions the convolution read, 0 elsewhere; one
// thread per pack of dx, so every element is written once.
template <class T, int kVec>
__global__ void spread_kernel(const T* g, T* dx, Subsample s, std::int64_t dx_rows, int packs) {
  const std::int64_t total = dx_rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t channels = static_cast<std::int64_t>(packs) * kVec;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    const std::int64_t row = i / packs, c = (i % packs) * kVec;
    const std::int64_t col = row % s.w, t = row / s.w;
    const std::int64_t h = t % s.h, n = t / s.h;
    Pack<T, kVec> v{};
    if (h % s.stride_h == 0 && col % s.stride_w == 0 && h / s.stride_h < s.out_h &&
        col / s.stride_w < s.out_w) {
      const std::int64_t g_row = (n * s.out_h + h / s.stride_h) * s.out_w + col / s.stride_w;
      v = load<T, kVec>(g + g_row * channels + c);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v.v[j] = from_f32<T>(0.0f);
    }
    store(dx + row * channels + c, v);
  }
}

// dx[source_row(row)] += g[row], in f32; the positions the convolution did not read keep
// their value. One thread per pack of g: each dx element has at most one writer.
template <class T, int kVec>
__global__ void spread_add_kernel(const T* g, T* dx, Subsample s, std::int64_t rows, int packs) {
  const std::int64_t total = rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t channels = static_cast<std::int64_t>(packs) * kVec;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    const std::int64_t row = i / packs, c = (i % packs) * kVec;
    T* target = dx + source_row(row, s) * channels + c;
    const Pack<T, kVec> add = load<T, kVec>(g + row * channels + c);
    Pack<T, kVec> old = load<T, kVec>(target);
#pragma unroll
    for (int j = 0; j < kVec; ++j) old.v[j] = from_f32<T>(to_f32(old.v[j]) + to_f32(add.v[j]));
    store(target, old);
  }
}

Subsample subsample_of(const Conv2dParams& p) {
  return {static_cast<int>(p.h),       static_cast<int>(p.w),   static_cast<int>(p.out_h()),
          static_cast<int>(p.out_w()), p.stride_h,              p.stride_w};
}

// Calls f(TypeTag<T>, integral_constant<kVec>): 16-byte packs when the channels are a
// multiple of one and both pointers are 16-byte aligned, else one channel per thread.
template <class F>
void dispatch_packs(DType dtype, std::int64_t channels, const void* a, const void* b, F&& f) {
  dispatch_float(dtype, "conv2d (1x1 as a matrix product)", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kWide = 16 / sizeof(T);
    if (channels % kWide == 0 && aligned16(a) && aligned16(b))
      f(tag, std::integral_constant<int, kWide>{});
    else
      f(tag, std::integral_constant<int, 1>{});
  });
}

enum class Spread { kOverwrite, kAdd };

void gather(const Conv2dParams& p, DType dtype, const void* x, void* out, cudaStream_t stream) {
  const std::int64_t rows = p.n * p.out_h() * p.out_w();
  dispatch_packs(dtype, p.c, x, out, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    const int packs = static_cast<int>(p.c / kVec);
    gather_kernel<T, kVec><<<grid_for(rows * packs), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(out), subsample_of(p), rows, packs);
  });
  CUDA_CHECK(cudaGetLastError());
}

void spread(const Conv2dParams& p, DType dtype, const void* g, void* dx, Spread how,
            cudaStream_t stream) {
  dispatch_packs(dtype, p.c, g, dx, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    const int packs = static_cast<int>(p.c / kVec);
    const auto* src = static_cast<const T*>(g);
    auto* dst = static_cast<T*>(dx);
    if (how == Spread::kOverwrite) {
      const std::int64_t rows = p.n * p.h * p.w;
      spread_kernel<T, kVec><<<grid_for(rows * packs), kBlock, 0, stream>>>(
          src, dst, subsample_of(p), rows, packs);
    } else {
      const std::int64_t rows = p.n * p.out_h() * p.out_w();
      spread_add_kernel<T, kVec><<<grid_for(rows * packs), kBlock, 0, stream>>>(
          src, dst, subsample_of(p), rows, packs);
    }
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

bool CudaBackend::gemm_can_run(const Conv2dParams& p) {
  return p.r == 1 && p.s == 1 && p.pad_h == 0 && p.pad_w == 0 && p.dilation_h == 1 &&
         p.dilation_w == 1;
}

void CudaBackend::conv_gemm(ConvDirection direction, const Conv2dParams& p, DType dtype,
                            const ConvOperands& o, const void* bias, float beta) {
  MatmulParams mp;
  mp.m = p.n * p.out_h() * p.out_w(), mp.k = p.c, mp.n = p.k, mp.math = p.math;
  mp.bias = direction == ConvDirection::kForward && bias != nullptr;
  const MatmulDirection md = direction == ConvDirection::kForward ? MatmulDirection::kForward
                             : direction == ConvDirection::kBackwardData
                                 ? MatmulDirection::kBackwardData
                                 : MatmulDirection::kBackwardWeights;
  MatmulPlan& plan = matmul_plan(md, mp, dtype);
  const bool strided = p.stride_h != 1 || p.stride_w != 1;
  // The subsampled pixels [m, C] first, cuBLASLt's workspace behind them.
  const std::size_t pixels = strided ? align_up(static_cast<std::size_t>(mp.m * p.c) *
                                                size_of(dtype))
                                     : 0;
  auto* ws = static_cast<char*>(workspace(pixels + plan.workspace_bytes));
  void* matmul_ws = plan.workspace_bytes > 0 ? ws + pixels : nullptr;
  switch (direction) {
    case ConvDirection::kForward:
      if (strided) gather(p, dtype, o.x, ws, stream_);
      run_matmul(plan, o.w, strided ? ws : o.x, o.y, 0.0f, mp.bias ? bias : nullptr, matmul_ws);
      break;
    case ConvDirection::kBackwardData:
      if (!strided) {
        run_matmul(plan, o.w, o.y, o.x, beta, nullptr, matmul_ws);
      } else {
        run_matmul(plan, o.w, o.y, ws, 0.0f, nullptr, matmul_ws);
        spread(p, dtype, ws, o.x, beta != 0.0f ? Spread::kAdd : Spread::kOverwrite, stream_);
      }
      break;
    case ConvDirection::kBackwardFilter:
      if (strided) gather(p, dtype, o.x, ws, stream_);
      run_matmul(plan, strided ? ws : o.x, o.y, o.w, beta, nullptr, matmul_ws);
      break;
  }
}

}  // namespace dlbench::backend::cuda
