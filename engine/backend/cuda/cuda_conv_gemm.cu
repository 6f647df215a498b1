// Convolutions as cuBLASLt matrix products over the pixels (im2col).
//
// Row (n, p, q) of the column matrix col [m = N P Q, R S C] holds the input values that output
// pixel reads, in the weights' KRSC order: col[(n, p, q), (r, s, c)] =
// x[n, p sh - ph + r dh, q sw - pw + s dw, c], 0 where that falls in the padding. Then, with
// the weights as W [K, R S C]:
//   forward:          y[m, K]   = col · Wᵀ (+ b)
//   backward-weights: dW[K, RSC] = dyᵀ · col
//   backward-data:    dcol = dy · W, summed back into dx; done here only for 1x1 shapes
//                     without padding, where each pixel of dx is read at most once
// A 1x1 convolution at stride 1 without padding needs no col: it is x itself, [m, C]. At
// stride > 1 the data gradient is computed into the workspace and spread back to the pixels
// the convolution read, zeros elsewhere (or added there, leaving the rest, when dx
// accumulates). col is built in chunks of rows that fit kColumnBytes, so the workspace stays
// bounded; each chunk is one product (backward-weights accumulates over the chunks).
//
// Why: cuDNN's FMA (strict f32) kernels for NHWC run 1x1 shapes at a fraction of what a
// single-precision GEMM reaches, and two ResNet-50 shapes pathologically (2026-11-22, H100:
// 55-65 ms for a backward-data that a GEMM does in 0.7). The choice between the two is made per
// shape and direction by measurement in cuda_conv.cc, so shapes where cuDNN is faster (most
// 3x3 ones in fp16, where col costs more memory traffic than it saves) stay on cuDNN.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

// The geometry of a convolution, narrowed to int for the kernels (the launcher checks the
// flat sizes, which stay 64-bit).
struct Geometry {
  int h, w, c, out_h, out_w, r, s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

// Row of x (n, p sh, q sw) that row (n, p, q) of a 1x1 unpadded convolution reads.
__device__ __forceinline__ std::int64_t source_row(std::int64_t row, const Geometry& g) {
  const std::int64_t q = row % g.out_w, t = row / g.out_w;
  const std::int64_t p = t % g.out_h, n = t / g.out_h;
  return (n * g.h + p * g.stride_h) * g.w + q * g.stride_w;
}

// col rows [first_row, first_row + rows), kVec channels per thread; a thread owns a pack of one
// (r, s) position of one row, so consecutive threads read consecutive channels.
template <class T, int kVec>
__global__ void im2col_kernel(const T* x, T* col, Geometry g, std::int64_t first_row,
                              std::int64_t rows) {
  const int packs = g.c / kVec;
  const std::int64_t row_packs = static_cast<std::int64_t>(g.r) * g.s * packs;
  const std::int64_t total = rows * row_packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t local = i / row_packs;
    const int within = static_cast<int>(i % row_packs);
    const int c = (within % packs) * kVec, rs = within / packs;
    const int kw = rs % g.s, kh = rs / g.s;
    const std::int64_t row = first_row + local;
    const int q = static_cast<int>(row % g.out_w);
    const std::int64_t t = row / g.out_w;
    const int p = static_cast<int>(t % g.out_h);
    const std::int64_t n = t / g.out_h;
    const int h = p * g.stride_h - g.pad_h + kh * g.dilation_h;
    const int w = q * g.stride_w - g.pad_w + kw * g.dilation_w;
    Pack<T, kVec> v;
    if (h >= 0 && h < g.h && w >= 0 && w < g.w) {
      v = load<T, kVec>(x + ((n * g.h + h) * g.w + w) * g.c + c);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v.v[j] = from_f32<T>(0.0f);
    }
    store(col + local * (row_packs * kVec) + static_cast<std::int64_t>(rs) * g.c + c, v);
  }
}

// dx = the gradient g of the pixels a 1x1 convolution read, 0 elsewhere; one thread per pack
// of dx, so every element is written once.
template <class T, int kVec>
__global__ void spread_kernel(const T* grad, T* dx, Geometry g, std::int64_t dx_rows) {
  const int packs = g.c / kVec;
  const std::int64_t total = dx_rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t row = i / packs, c = (i % packs) * kVec;
    const std::int64_t col = row % g.w, t = row / g.w;
    const std::int64_t h = t % g.h, n = t / g.h;
    Pack<T, kVec> v;
    if (h % g.stride_h == 0 && col % g.stride_w == 0 && h / g.stride_h < g.out_h &&
        col / g.stride_w < g.out_w) {
      const std::int64_t g_row = (n * g.out_h + h / g.stride_h) * g.out_w + col / g.stride_w;
      v = load<T, kVec>(grad + g_row * g.c + c);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) v.v[j] = from_f32<T>(0.0f);
    }
    store(dx + row * g.c + c, v);
  }
}

// dx[source_row(row)] += grad[row], in f32; the pixels the convolution did not read keep their
// value. One thread per pack of grad: each dx element has at most one writer.
template <class T, int kVec>
__global__ void spread_add_kernel(const T* grad, T* dx, Geometry g, std::int64_t rows) {
  const int packs = g.c / kVec;
  const std::int64_t total = rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t row = i / packs, c = (i % packs) * kVec;
    T* target = dx + source_row(row, g) * g.c + c;
    const Pack<T, kVec> add = load<T, kVec>(grad + row * g.c + c);
    Pack<T, kVec> old = load<T, kVec>(target);
#pragma unroll
    for (int j = 0; j < kVec; ++j) old.v[j] = from_f32<T>(to_f32(old.v[j]) + to_f32(add.v[j]));
    store(target, old);
  }
}

Geometry geometry_of(const Conv2dParams& p) {
  auto i = [](std::int64_t v) { return static_cast<int>(v); };
  return {i(p.h),     i(p.w),     i(p.c),  i(p.out_h()), i(p.out_w()), i(p.r),      i(p.s),
          p.stride_h, p.stride_w, p.pad_h, p.pad_w,      p.dilation_h, p.dilation_w};
}

// Calls f(TypeTag<T>, integral_constant<kVec>): 16-byte packs when the channels are a
// multiple of one and both pointers are 16-byte aligned, else one channel per thread.
template <class F>
void dispatch_packs(DType dtype, std::int64_t channels, const void* a, const void* b, F&& f) {
  dispatch_float(dtype, "conv2d (as a matrix product)", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kWide = 16 / sizeof(T);
    if (channels % kWide == 0 && aligned16(a) && aligned16(b))
      f(tag, std::integral_constant<int, kWide>{});
    else
      f(tag, std::integral_constant<int, 1>{});
  });
}

void im2col(const Conv2dParams& p, DType dtype, const void* x, void* col, std::int64_t first_row,
            std::int64_t rows, cudaStream_t stream) {
  dispatch_packs(dtype, p.c, x, col, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    im2col_kernel<T, kVec><<<grid_for(rows * p.r * p.s * (p.c / kVec)), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(col), geometry_of(p), first_row, rows);
  });
  CUDA_CHECK(cudaGetLastError());
}

enum class Spread { kOverwrite, kAdd };

void spread(const Conv2dParams& p, DType dtype, const void* grad, void* dx, Spread how,
            cudaStream_t stream) {
  dispatch_packs(dtype, p.c, grad, dx, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    const auto* src = static_cast<const T*>(grad);
    auto* dst = static_cast<T*>(dx);
    if (how == Spread::kOverwrite) {
      const std::int64_t rows = p.n * p.h * p.w;
      spread_kernel<T, kVec>
          <<<grid_for(rows * (p.c / kVec)), kBlock, 0, stream>>>(src, dst, geometry_of(p), rows);
    } else {
      const std::int64_t rows = p.n * p.out_h() * p.out_w();
      spread_add_kernel<T, kVec>
          <<<grid_for(rows * (p.c / kVec)), kBlock, 0, stream>>>(src, dst, geometry_of(p), rows);
    }
  });
  CUDA_CHECK(cudaGetLastError());
}

constexpr std::int64_t kChunkRows = 256;

bool one_by_one(const Conv2dParams& p) {
  return p.r == 1 && p.s == 1 && p.pad_h == 0 && p.pad_w == 0;
}

}  // namespace

bool CudaBackend::gemm_can_run(const Conv2dParams& p, ConvDirection direction) {
  // int geometry in the kernels; col rows of one pixel must fit a chunk.
  const std::int64_t largest = std::max(p.n * p.h * p.w * p.c, p.n * p.out_h() * p.out_w() * p.k);
  if (largest > std::numeric_limits<int>::max() / 2) return false;
  if (direction == ConvDirection::kBackwardData) return one_by_one(p);
  return true;
}

void CudaBackend::conv_gemm(ConvDirection direction, const Conv2dParams& p, DType dtype,
                            const ConvOperands& o, const void* bias, float beta) {
  const std::int64_t m = p.n * p.out_h() * p.out_w(), depth = p.r * p.s * p.c;
  const std::size_t element = size_of(dtype);
  // x is col itself for a 1x1 unpadded convolution at stride 1.
  const bool direct = one_by_one(p) && p.stride_h == 1 && p.stride_w == 1;
  MatmulParams mp;
  mp.k = depth, mp.n = p.k, mp.math = p.math;
  mp.bias = direction == ConvDirection::kForward && bias != nullptr;

  if (direction == ConvDirection::kBackwardData) {  // 1x1 only (gemm_can_run)
    mp.m = m;
    MatmulPlan& plan = matmul_plan(MatmulDirection::kBackwardData, mp, dtype);
    if (direct) {
      run_matmul(plan, o.w, o.y, o.x, beta, nullptr, workspace(plan.workspace_bytes));
      return;
    }
    // The data gradient of the pixels read [m, C] first, cuBLASLt's workspace behind it.
    const std::size_t read = align_up(static_cast<std::size_t>(m * p.c) * element);
    auto* ws = static_cast<char*>(workspace(read + plan.workspace_bytes));
    run_matmul(plan, o.w, o.y, ws, 0.0f, nullptr, ws + read);
    spread(p, dtype, ws, o.x, beta != 0.0f ? Spread::kAdd : Spread::kOverwrite, stream_);
    return;
  }

  const MatmulDirection md = direction == ConvDirection::kForward
                                 ? MatmulDirection::kForward
                                 : MatmulDirection::kBackwardWeights;
  // Rows per chunk: a multiple of kChunkRows, so every chunk's slice of y or dy starts
  // 256-byte aligned as cuBLASLt's kernels assume.
  const auto fitting =
      static_cast<std::int64_t>(column_bytes_ / (static_cast<std::size_t>(depth) * element));
  const std::int64_t chunk =
      direct ? m
             : std::min(m, std::max<std::int64_t>(kChunkRows, fitting / kChunkRows * kChunkRows));
  for (std::int64_t first = 0; first < m; first += chunk) {
    mp.m = std::min(chunk, m - first);
    MatmulPlan& plan = matmul_plan(md, mp, dtype);
    const std::size_t col_bytes =
        direct ? 0 : align_up(static_cast<std::size_t>(mp.m * depth) * element);
    auto* ws = static_cast<char*>(workspace(col_bytes + plan.workspace_bytes));
    const void* col = o.x;
    if (!direct) im2col(p, dtype, o.x, ws, first, mp.m, stream_), col = ws;
    void* matmul_ws = ws + col_bytes;
    const std::size_t out_offset = static_cast<std::size_t>(first * p.k) * element;
    if (direction == ConvDirection::kForward) {
      run_matmul(plan, o.w, col, static_cast<char*>(o.y) + out_offset, 0.0f,
                 mp.bias ? bias : nullptr, matmul_ws);
    } else {  // dW accumulates over the chunks after the first
      run_matmul(plan, col, static_cast<const char*>(o.y) + out_offset, o.w,
                 first == 0 ? beta : 1.0f, nullptr, matmul_ws);
    }
  }
}

}  // namespace dlbench::backend::cuda
