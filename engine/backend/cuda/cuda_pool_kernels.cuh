// Max and average pooling kernels, forward and backward; what each computes and how threads
// divide the work are in cuda_pool.cu's opening comment, next to the launchers that pick them.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "engine/backend/cuda/cuda_kernels.cuh"

// Included by cuda_pool.cu alone (the launchers), hence the unnamed namespace.
namespace dlbench::backend::cuda {
namespace {

// PoolParams narrowed to int for the kernels (the launchers check that everything fits).
struct PoolGeometry {
  int d, h, w, c, out_d, out_h, out_w;
  int window_d, window_h, window_w, stride_d, stride_h, stride_w, pad_d, pad_h, pad_w;
};

// First and last output index (inclusive) whose window covers input index i along one axis.
__device__ __forceinline__ int first_cover(int i, int window, int stride, int pad) {
  const int top = i + pad - window + 1;  // window start must be >= this
  return top <= 0 ? 0 : (top + stride - 1) / stride;
}
__device__ __forceinline__ int last_cover(int i, int stride, int pad, int outputs) {
  return min((i + pad) / stride, outputs - 1);
}

// The window, stride and padding a kernel reads: the geometry's at run time, or constants
// for the window models run (ResNet's 3x3/2 padded by 1, 2D), so that the divisions by the
// stride become shifts and the window's loops unroll.
struct RuntimeWindow {
  static constexpr bool kFixed = false;
  __device__ static int window_d(const PoolGeometry& g) { return g.window_d; }
  __device__ static int window_h(const PoolGeometry& g) { return g.window_h; }
  __device__ static int window_w(const PoolGeometry& g) { return g.window_w; }
  __device__ static int stride_d(const PoolGeometry& g) { return g.stride_d; }
  __device__ static int stride_h(const PoolGeometry& g) { return g.stride_h; }
  __device__ static int stride_w(const PoolGeometry& g) { return g.stride_w; }
  __device__ static int pad_d(const PoolGeometry& g) { return g.pad_d; }
  __device__ static int pad_h(const PoolGeometry& g) { return g.pad_h; }
  __device__ static int pad_w(const PoolGeometry& g) { return g.pad_w; }
};
template <int kWindow, int kStride, int kPad>
struct FixedWindow {  // 2D: depth 1
  static constexpr bool kFixed = true;
  static constexpr int kWindowSize = kWindow, kStrideSize = kStride, kPadSize = kPad;
  __device__ static constexpr int window_d(const PoolGeometry&) { return 1; }
  __device__ static constexpr int window_h(const PoolGeometry&) { return kWindow; }
  __device__ static constexpr int window_w(const PoolGeometry&) { return kWindow; }
  __device__ static constexpr int stride_d(const PoolGeometry&) { return 1; }
  __device__ static constexpr int stride_h(const PoolGeometry&) { return kStride; }
  __device__ static constexpr int stride_w(const PoolGeometry&) { return kStride; }
  __device__ static constexpr int pad_d(const PoolGeometry&) { return 0; }
  __device__ static constexpr int pad_h(const PoolGeometry&) { return kPad; }
  __device__ static constexpr int pad_w(const PoolGeometry&) { return kPad; }
};

// --- forward ---------------------------------------------------------------------------------

// rows = N O P, one per (n, o, p); columns = Q packs. argmax may be null (average pooling).
template <class T, class Idx, int kVec, PoolKind kKind, class Win>
__global__ void pool_forward_kernel(const T* __restrict__ x, PoolGeometry g, std::int64_t rows,
                                    T* __restrict__ y, Idx* __restrict__ argmax) {
  const int wd = Win::window_d(g), wh = Win::window_h(g), ww = Win::window_w(g);
  const int packs = g.c / kVec;
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= g.out_w * packs) return;
  const int q = col / packs;
  const int c0 = (col - q * packs) * kVec;
  const int w_start = q * Win::stride_w(g) - Win::pad_w(g);
  const int w0 = max(w_start, 0), w1 = min(w_start + ww, g.w);
  for (std::int64_t row = blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += std::int64_t{gridDim.y} * blockDim.y) {
    const auto plane = static_cast<int>(row / g.out_h);  // n O + o
    const int p = static_cast<int>(row - std::int64_t{plane} * g.out_h);
    const int n = plane / g.out_d, o = plane - n * g.out_d;
    const int d_start = o * Win::stride_d(g) - Win::pad_d(g);
    const int h_start = p * Win::stride_h(g) - Win::pad_h(g);
    const int d0 = max(d_start, 0), d1 = min(d_start + wd, g.d);
    const int h0 = max(h_start, 0), h1 = min(h_start + wh, g.h);
    float acc[kVec];
    int best[kVec];
    for (int i = 0; i < kVec; ++i) {  // best starts at the first in-bounds position
      acc[i] = kKind == PoolKind::kMax ? -INFINITY : 0.0f;
      best[i] = ((d0 - d_start) * wh + (h0 - h_start)) * ww + (w0 - w_start);
    }
    // Takes the window's position k, whose channels are v.
    auto take = [&](const Pack<T, kVec>& v, int k) {
      for (int i = 0; i < kVec; ++i) {
        const float f = to_f32(v.v[i]);
        if constexpr (kKind == PoolKind::kMax) {
          if (f > acc[i]) acc[i] = f, best[i] = k;
        } else {
          acc[i] += f;
        }
      }
    };
    if constexpr (Win::kFixed) {
      // Every in-bounds position loaded first, then taken in order: the loads are in flight
      // together, where a loop waits for each before the next.
      constexpr int kWh = Win::kWindowSize, kWw = Win::kWindowSize;
      const std::int64_t image = std::int64_t{n} * g.h;
      Pack<T, kVec> v[kWh][kWw];
#pragma unroll
      for (int kh = 0; kh < kWh; ++kh)
#pragma unroll
        for (int kw = 0; kw < kWw; ++kw)
          if (h0 <= h_start + kh && h_start + kh < h1 && w0 <= w_start + kw && w_start + kw < w1)
            v[kh][kw] = load<T, kVec>(x + ((image + h_start + kh) * g.w + w_start + kw) * g.c + c0);
#pragma unroll
      for (int kh = 0; kh < kWh; ++kh)
#pragma unroll
        for (int kw = 0; kw < kWw; ++kw)
          if (h0 <= h_start + kh && h_start + kh < h1 && w0 <= w_start + kw && w_start + kw < w1)
            take(v[kh][kw], kh * kWw + kw);
    } else {
      for (int dd = d0; dd < d1; ++dd)
        for (int h = h0; h < h1; ++h)
          for (int w = w0; w < w1; ++w) {
            const std::int64_t in = ((std::int64_t{n} * g.d + dd) * g.h + h) * g.w + w;
            take(load<T, kVec>(x + in * g.c + c0),
                 ((dd - d_start) * wh + (h - h_start)) * ww + (w - w_start));
          }
    }
    const std::int64_t out = (row * g.out_w + q) * g.c + c0;
    const float scale = kKind == PoolKind::kMax
                            ? 1.0f
                            : 1.0f / static_cast<float>((d1 - d0) * (h1 - h0) * (w1 - w0));
    Pack<T, kVec> r;
    for (int i = 0; i < kVec; ++i) r.v[i] = from_f32<T>(acc[i] * scale);
    store<T, kVec>(y + out, r);
    if constexpr (kKind == PoolKind::kMax) {
      if (argmax != nullptr) {
        Pack<Idx, kVec> a;
        for (int i = 0; i < kVec; ++i) a.v[i] = static_cast<Idx>(best[i]);
        store<Idx, kVec>(argmax + out, a);
      }
    }
  }
}

// --- backward --------------------------------------------------------------------------------

// dx's pack at `at` = v (+ the old dx when accumulating), rounded to T.
template <class T, int kVec>
__device__ __forceinline__ void store_gradient(T* at, float (&v)[kVec], bool accumulate) {
  if (accumulate) {
    const Pack<T, kVec> old = load<T, kVec>(at);
    for (int i = 0; i < kVec; ++i) v[i] += to_f32(old.v[i]);
  }
  Pack<T, kVec> r;
  for (int i = 0; i < kVec; ++i) r.v[i] = from_f32<T>(v[i]);
  store<T, kVec>(at, r);
}

// rows = N D H, one per (n, d, h); columns = W packs.
template <class T, class Idx, int kVec, PoolKind kKind>
__global__ void pool_backward_kernel(const T* __restrict__ dy, const Idx* __restrict__ argmax,
                                     PoolGeometry g, std::int64_t rows, bool accumulate,
                                     T* __restrict__ dx) {
  const int packs = g.c / kVec;
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= g.w * packs) return;
  const int w = col / packs;
  const int c0 = (col - w * packs) * kVec;
  const int q0 = first_cover(w, g.window_w, g.stride_w, g.pad_w);
  const int q1 = last_cover(w, g.stride_w, g.pad_w, g.out_w);
  for (std::int64_t row = blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += std::int64_t{gridDim.y} * blockDim.y) {
    const auto plane = static_cast<int>(row / g.h);  // n D + d
    const int h = static_cast<int>(row - std::int64_t{plane} * g.h);
    const int n = plane / g.d, dd = plane - n * g.d;
    const int o0 = first_cover(dd, g.window_d, g.stride_d, g.pad_d);
    const int o1 = last_cover(dd, g.stride_d, g.pad_d, g.out_d);
    const int p0 = first_cover(h, g.window_h, g.stride_h, g.pad_h);
    const int p1 = last_cover(h, g.stride_h, g.pad_h, g.out_h);
    float acc[kVec];
    for (int i = 0; i < kVec; ++i) acc[i] = 0.0f;
    for (int o = o0; o <= o1; ++o)
      for (int p = p0; p <= p1; ++p)
        for (int q = q0; q <= q1; ++q) {
          const std::int64_t out_row = (std::int64_t{n} * g.out_d + o) * g.out_h + p;
          const std::int64_t out = (out_row * g.out_w + q) * g.c + c0;
          const Pack<T, kVec> grad = load<T, kVec>(dy + out);
          const int d_start = o * g.stride_d - g.pad_d, h_start = p * g.stride_h - g.pad_h,
                    w_start = q * g.stride_w - g.pad_w;
          if constexpr (kKind == PoolKind::kMax) {
            const int k =
                ((dd - d_start) * g.window_h + (h - h_start)) * g.window_w + (w - w_start);
            const Pack<Idx, kVec> a = load<Idx, kVec>(argmax + out);
            for (int i = 0; i < kVec; ++i)
              if (static_cast<int>(a.v[i]) == k) acc[i] += to_f32(grad.v[i]);
          } else {
            const int planes_in = min(d_start + g.window_d, g.d) - max(d_start, 0);
            const int rows_in = min(h_start + g.window_h, g.h) - max(h_start, 0);
            const int cols_in = min(w_start + g.window_w, g.w) - max(w_start, 0);
            const auto count = static_cast<float>(planes_in * rows_in * cols_in);
            for (int i = 0; i < kVec; ++i) acc[i] += to_f32(grad.v[i]) / count;
          }
        }
    store_gradient<T, kVec>(dx + (row * g.w + w) * g.c + c0, acc, accumulate);
  }
}

// Windows that overlap by at most one position (ResNet's 3x3/2), 2D, dx overwritten: a
// thread owns a stride_h x stride_w block of inputs (n, bh, bw, channels), whose covering
// outputs are at most 2 x 2. It loads their dy (and argmax) once into registers and sums them
// into each of its inputs in the gather's order (p, then q, ascending), so each dy is read by 4
// threads rather than the 9 inputs of its window, and dx is the gather's to the bit. (Adding
// into dx it measured slower than the gather, so accumulation stays there.) rows = N
// ceil(H / stride_h); columns = ceil(W / stride_w) packs.
constexpr int kBlockCover = 2;

template <class T, class Idx, int kVec, PoolKind kKind, class Win>
__global__ void pool_backward_blocked_kernel(const T* __restrict__ dy,
                                             const Idx* __restrict__ argmax, PoolGeometry g,
                                             int rows, T* __restrict__ dx) {
  const int wh = Win::window_h(g), ww = Win::window_w(g), sh = Win::stride_h(g),
            sw = Win::stride_w(g), ph = Win::pad_h(g), pw = Win::pad_w(g);
  const int packs = g.c / kVec;
  const int rows_per_image = (g.h + sh - 1) / sh;  // of stride blocks
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int block_cols = (g.w + sw - 1) / sw;
  if (col >= block_cols * packs) return;
  const int bw = col / packs;
  const int c0 = (col - bw * packs) * kVec;
  const int w_first = bw * sw;
  const int q0 = first_cover(w_first, ww, sw, pw);
  const int q1 = last_cover(min(w_first + sw, g.w) - 1, sw, pw, g.out_w);
  for (int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); row < rows;
       row += static_cast<int>(gridDim.y * blockDim.y)) {
    const int n = row / rows_per_image;
    const int bh = row - n * rows_per_image;
    const int h_first = bh * sh;
    const int p0 = first_cover(h_first, wh, sh, ph);
    const int p1 = last_cover(min(h_first + sh, g.h) - 1, sh, ph, g.out_h);
    Pack<T, kVec> grad[kBlockCover][kBlockCover];
    Pack<Idx, kVec> best[kBlockCover][kBlockCover];
#pragma unroll
    for (int i = 0; i < kBlockCover; ++i)
#pragma unroll
      for (int j = 0; j < kBlockCover; ++j)
        if (p0 + i <= p1 && q0 + j <= q1) {
          const std::int64_t out =
              ((std::int64_t{n} * g.out_h + p0 + i) * g.out_w + q0 + j) * g.c + c0;
          grad[i][j] = load<T, kVec>(dy + out);
          if constexpr (kKind == PoolKind::kMax) best[i][j] = load<Idx, kVec>(argmax + out);
        }
#pragma unroll
    for (int dh = 0; dh < sh; ++dh) {
      const int h = h_first + dh;
      if (h >= g.h) break;
      const int hp0 = first_cover(h, wh, sh, ph), hp1 = last_cover(h, sh, ph, g.out_h);
#pragma unroll
      for (int dw = 0; dw < sw; ++dw) {
        const int w = w_first + dw;
        if (w >= g.w) break;
        const int wq0 = first_cover(w, ww, sw, pw), wq1 = last_cover(w, sw, pw, g.out_w);
        float acc[kVec];
        for (int v = 0; v < kVec; ++v) acc[v] = 0.0f;
#pragma unroll
        for (int i = 0; i < kBlockCover; ++i)
#pragma unroll
          for (int j = 0; j < kBlockCover; ++j) {
            const int p = p0 + i, q = q0 + j;
            if (p < hp0 || p > hp1 || q < wq0 || q > wq1) continue;
            const int h_start = p * sh - ph, w_start = q * sw - pw;
            if constexpr (kKind == PoolKind::kMax) {
              const int k = (h - h_start) * ww + (w - w_start);
              for (int v = 0; v < kVec; ++v)
                if (static_cast<int>(best[i][j].v[v]) == k) acc[v] += to_f32(grad[i][j].v[v]);
            } else {
              const int rows_in = min(h_start + wh, g.h) - max(h_start, 0);
              const int cols_in = min(w_start + ww, g.w) - max(w_start, 0);
              const auto count = static_cast<float>(rows_in * cols_in);
              for (int v = 0; v < kVec; ++v) acc[v] += to_f32(grad[i][j].v[v]) / count;
            }
          }
        const std::int64_t in = (std::int64_t{n} * g.h + h) * g.w + w;
        store_gradient<T, kVec>(dx + in * g.c + c0, acc, false);
      }
    }
  }
}

// Windows that tile the input exactly (window = stride, no padding, every input in one window:
// VGG's 2x2/2): a thread per output (n, o, p, q, pack) writes its whole window's gradient, dy
// where the argmax names the position (max) or dy / count (average), 0 elsewhere. No input is
// in two windows, so nothing is gathered, and the index arithmetic is done once per output
// rather than once per input. rows = N O P (an int: the launcher checks); columns = Q packs.
template <class T, class Idx, int kVec, PoolKind kKind>
__global__ void pool_backward_tiled_kernel(const T* __restrict__ dy, const Idx* __restrict__ argmax,
                                           PoolGeometry g, int rows, bool accumulate,
                                           T* __restrict__ dx) {
  const int packs = g.c / kVec;
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= g.out_w * packs) return;
  const int q = col / packs;
  const int c0 = (col - q * packs) * kVec;
  const auto count = static_cast<float>(g.window_d * g.window_h * g.window_w);
  for (int row = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); row < rows;
       row += static_cast<int>(gridDim.y * blockDim.y)) {
    const int plane = row / g.out_h;  // n O + o
    const int p = row - plane * g.out_h;
    const int n = plane / g.out_d, o = plane - n * g.out_d;
    const std::int64_t out = (std::int64_t{row} * g.out_w + q) * g.c + c0;
    const Pack<T, kVec> grad = load<T, kVec>(dy + out);
    Pack<Idx, kVec> a{};
    if constexpr (kKind == PoolKind::kMax) a = load<Idx, kVec>(argmax + out);
    int k = 0;  // the position inside the window, as the forward numbered it
    for (int kd = 0; kd < g.window_d; ++kd)
      for (int kh = 0; kh < g.window_h; ++kh) {
        const std::int64_t in_row =
            (std::int64_t{n} * g.d + o * g.stride_d + kd) * g.h + p * g.stride_h + kh;
        T* first = dx + (in_row * g.w + std::int64_t{q} * g.stride_w) * g.c + c0;
        for (int kw = 0; kw < g.window_w; ++kw, ++k) {
          float v[kVec];
          for (int i = 0; i < kVec; ++i) {
            if constexpr (kKind == PoolKind::kMax)
              v[i] = static_cast<int>(a.v[i]) == k ? to_f32(grad.v[i]) : 0.0f;
            else
              v[i] = to_f32(grad.v[i]) / count;
          }
          store_gradient<T, kVec>(first + std::int64_t{kw} * g.c, v, accumulate);
        }
      }
  }
}

}  // namespace
}  // namespace dlbench::backend::cuda
