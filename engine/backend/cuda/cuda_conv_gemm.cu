// Convolutions as cuBLASLt matrix products over the pixels (im2col).
//
// Row (n, p, q) of the column matrix col [m = N P Q, R S C] holds the input values that output
// pixel reads, in the weights' KRSC order: col[(n, p, q), (r, s, c)] =
// x[n, p sh - ph + r dh, q sw - pw + s dw, c], 0 where that falls in the padding. Then, with
// the weights as W [K, R S C]:
//   forward:          y[m, K]   = col · Wᵀ (+ b)
//   backward-weights: dW[K, RSC] = dyᵀ · col
//   backward-data:    dcol [m, RSC] = dy · W, summed back into dx per pixel (col2im, a
//                     gather in a fixed order: no atomics)
// A 1x1 convolution at stride 1 without padding needs no col: it is x itself, [m, C]. At
// stride > 1 the data gradient is computed into the workspace and spread back to the pixels
// the convolution read, zeros elsewhere (or added there, leaving the rest, when dx
// accumulates). col is built in chunks of rows (dcol: of whole images) that fit the backend's
// column budget, so the workspace stays bounded; each chunk is one product (backward-weights
// accumulates over the chunks).
//
// Why: cuDNN's FMA (strict f32) kernels for NHWC run 1x1 shapes at a fraction of what a
// single-precision GEMM reaches, and two ResNet-50 shapes pathologically (2026-11-22, H100:
// 55-65 ms for a backward-data that a GEMM does in 0.7). The choice between the two is made per
// shape and direction by measurement in cuda_conv.cc, so shapes where cuDNN is faster (most
// 3x3 ones in fp16, where col costs more memory traffic than it saves) stay on cuDNN. In f16
// and bf16, dcol is rounded to the dtype before col2im sums it (cuDNN sums in f32 inside), and
// backward-weights runs as a product only when its columns fit one chunk (chunks add into dW
// in its dtype).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
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

// dx = (or +=) the sum over the window positions (r, s) that read pixel (n, h, w) of dcol at
// the output pixel (p, q) that read it, for the images whose dcol rows are in this chunk.
// One thread per pack of dx; (r, s) in ascending order, in f32, so the sum is deterministic.
template <class T, int kVec>
__global__ void col2im_kernel(const T* dcol, T* dx, Geometry g, std::int64_t pixels,
                              bool accumulate) {
  const int packs = g.c / kVec;
  const std::int64_t depth = static_cast<std::int64_t>(g.r) * g.s * g.c;
  const std::int64_t total = pixels * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t pixel = i / packs;
    const int c = static_cast<int>(i % packs) * kVec;
    const int w = static_cast<int>(pixel % g.w);
    const std::int64_t t = pixel / g.w;
    const int h = static_cast<int>(t % g.h);
    const std::int64_t n = t / g.h;
    float sum[kVec] = {};
    for (int r = 0; r < g.r; ++r) {
      const int hp = h + g.pad_h - r * g.dilation_h;
      if (hp < 0 || hp % g.stride_h != 0 || hp / g.stride_h >= g.out_h) continue;
      for (int s = 0; s < g.s; ++s) {
        const int wq = w + g.pad_w - s * g.dilation_w;
        if (wq < 0 || wq % g.stride_w != 0 || wq / g.stride_w >= g.out_w) continue;
        const std::int64_t row = (n * g.out_h + hp / g.stride_h) * g.out_w + wq / g.stride_w;
        const Pack<T, kVec> v = load<T, kVec>(dcol + row * depth + (r * g.s + s) * g.c + c);
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum[j] += to_f32(v.v[j]);
      }
    }
    T* target = dx + pixel * g.c + c;
    Pack<T, kVec> out;
    if (accumulate) out = load<T, kVec>(target);
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      out.v[j] = from_f32<T>(accumulate ? to_f32(out.v[j]) + sum[j] : sum[j]);
    store(target, out);
  }
}

Geometry geometry_of(const ConvParams& p) {
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

void im2col(const ConvParams& p, DType dtype, const void* x, void* col, std::int64_t first_row,
            std::int64_t rows, cudaStream_t stream) {
  dispatch_packs(dtype, p.c, x, col, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    im2col_kernel<T, kVec><<<grid_for(rows * p.r * p.s * (p.c / kVec)), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(col), geometry_of(p), first_row, rows);
  });
  CUDA_CHECK(cudaGetLastError());
}

// dx of `images` images from their dcol rows (both pointers at the chunk's first image).
void col2im(const ConvParams& p, DType dtype, const void* dcol, void* dx, std::int64_t images,
            bool accumulate, cudaStream_t stream) {
  const std::int64_t pixels = images * p.h * p.w;
  dispatch_packs(dtype, p.c, dcol, dx, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    col2im_kernel<T, kVec><<<grid_for(pixels * (p.c / kVec)), kBlock, 0, stream>>>(
        static_cast<const T*>(dcol), static_cast<T*>(dx), geometry_of(p), pixels, accumulate);
  });
  CUDA_CHECK(cudaGetLastError());
}

enum class Spread { kOverwrite, kAdd };

void spread(const ConvParams& p, DType dtype, const void* grad, void* dx, Spread how,
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

// Units (rows or images) per chunk: as many as fit `fitting`, at least one, and a multiple of
// the units that make a 256-byte step, so every chunk's slice of y, dy or dx starts 256-byte
// aligned as cuBLASLt's kernels assume (ResNet's and VGG's shapes: any count of images, 256
// rows at most).
std::int64_t chunk_units(std::int64_t total, std::int64_t fitting, std::size_t unit_bytes) {
  const auto step =
      static_cast<std::int64_t>(kMemoryAlignment / std::gcd(kMemoryAlignment, unit_bytes));
  return std::min(total, std::max(step, fitting / step * step));
}

bool one_by_one(const ConvParams& p) {
  return p.r == 1 && p.s == 1 && p.pad_h == 0 && p.pad_w == 0;
}

}  // namespace

bool CudaBackend::gemm_can_run(ConvDirection direction, const ConvParams& p, DType dtype) const {
  if (p.volumetric()) return false;  // im2col is written for 2D; cuDNN takes 3D alone
  // int geometry in the kernels.
  const std::int64_t largest = std::max(p.n * p.h * p.w * p.c, p.n * p.out_h() * p.out_w() * p.k);
  if (largest > std::numeric_limits<int>::max() / 2) return false;
  // Backward-weights over several chunks adds their products in dW's dtype: in f16/bf16 each
  // chunk would round the running sum (cuDNN sums in f32), so low precision takes one chunk.
  const bool direct = one_by_one(p) && p.stride_h == 1 && p.stride_w == 1;
  const std::size_t col_bytes =
      static_cast<std::size_t>(p.n * p.out_h() * p.out_w() * p.r * p.s * p.c) * size_of(dtype);
  if (direction == ConvDirection::kBackwardFilter && dtype != DType::kF32 && !direct &&
      col_bytes > column_bytes_)
    return false;
  return true;
}

void CudaBackend::conv_gemm(ConvDirection direction, const ConvParams& p, DType dtype,
                            const ConvOperands& o, const void* bias, float beta) {
  const std::int64_t m = p.n * p.out_h() * p.out_w(), depth = p.r * p.s * p.c;
  const std::size_t element = size_of(dtype);
  // x is col itself for a 1x1 unpadded convolution at stride 1.
  const bool direct = one_by_one(p) && p.stride_h == 1 && p.stride_w == 1;
  MatmulParams mp;
  mp.k = depth, mp.n = p.k, mp.math = p.math;
  mp.bias = direction == ConvDirection::kForward && bias != nullptr;
  if (direction == ConvDirection::kForward) mp.activation = p.activation;

  if (direction == ConvDirection::kBackwardData) {
    conv_gemm_backward_data(p, dtype, o, beta);
    return;
  }

  const MatmulDirection md = direction == ConvDirection::kForward
                                 ? MatmulDirection::kForward
                                 : MatmulDirection::kBackwardWeights;
  const auto fitting =
      static_cast<std::int64_t>(column_bytes_ / (static_cast<std::size_t>(depth) * element));
  const std::int64_t chunk =
      direct ? m : chunk_units(m, fitting, static_cast<std::size_t>(p.k) * element);
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
    if (direction == ConvDirection::kForward) {  // a residual is cuBLASLt's C, before the epilogue
      const void* residual = o.r != nullptr ? static_cast<const char*>(o.r) + out_offset : nullptr;
      run_matmul(plan, o.w, col, static_cast<char*>(o.y) + out_offset, residual ? 1.0f : 0.0f,
                 mp.bias ? bias : nullptr, matmul_ws, residual);
    } else {  // dW accumulates over the chunks after the first
      run_matmul(plan, col, static_cast<const char*>(o.y) + out_offset, o.w,
                 first == 0 ? beta : 1.0f, nullptr, matmul_ws);
    }
  }
}

// dx from dcol = dy · W: a 1x1 unpadded shape's dcol is dx itself at stride 1, or the
// gradient of the pixels it read, spread back; any other shape sums dcol back per pixel
// (col2im), a chunk of whole images at a time, since a pixel's dcol rows are those of its
// image's neighbouring outputs.
void CudaBackend::conv_gemm_backward_data(const ConvParams& p, DType dtype, const ConvOperands& o,
                                          float beta) {
  const std::int64_t outputs = p.out_h() * p.out_w(), depth = p.r * p.s * p.c;
  const std::size_t element = size_of(dtype);
  MatmulParams mp;
  mp.k = depth, mp.n = p.k, mp.math = p.math;
  if (one_by_one(p)) {
    mp.m = p.n * outputs;
    MatmulPlan& plan = matmul_plan(MatmulDirection::kBackwardData, mp, dtype);
    if (p.stride_h == 1 && p.stride_w == 1) {
      run_matmul(plan, o.w, o.y, o.x, beta, nullptr, workspace(plan.workspace_bytes));
      return;
    }
    // The data gradient of the pixels read [m, C] first, cuBLASLt's workspace behind it.
    const std::size_t read = align_up(static_cast<std::size_t>(mp.m * p.c) * element);
    auto* ws = static_cast<char*>(workspace(read + plan.workspace_bytes));
    run_matmul(plan, o.w, o.y, ws, 0.0f, nullptr, ws + read);
    spread(p, dtype, ws, o.x, beta != 0.0f ? Spread::kAdd : Spread::kOverwrite, stream_);
    return;
  }
  const auto fitting = static_cast<std::int64_t>(
      column_bytes_ / (static_cast<std::size_t>(outputs * depth) * element));
  // Both dy's and dx's slices start at a chunk's first image.
  const std::size_t image_bytes =
      std::gcd(static_cast<std::size_t>(outputs * p.k), static_cast<std::size_t>(p.h * p.w * p.c)) *
      element;
  const std::int64_t chunk = chunk_units(p.n, fitting, image_bytes);
  for (std::int64_t first = 0; first < p.n; first += chunk) {
    const std::int64_t images = std::min(chunk, p.n - first);
    mp.m = images * outputs;
    MatmulPlan& plan = matmul_plan(MatmulDirection::kBackwardData, mp, dtype);
    const std::size_t col_bytes = align_up(static_cast<std::size_t>(mp.m * depth) * element);
    auto* ws = static_cast<char*>(workspace(col_bytes + plan.workspace_bytes));
    const auto dy =
        static_cast<const char*>(o.y) + static_cast<std::size_t>(first * outputs * p.k) * element;
    run_matmul(plan, o.w, dy, ws, 0.0f, nullptr, ws + col_bytes);
    col2im(p, dtype, ws,
           static_cast<char*>(o.x) + static_cast<std::size_t>(first * p.h * p.w * p.c) * element,
           images, beta != 0.0f, stream_);
  }
}

}  // namespace dlbench::backend::cuda
