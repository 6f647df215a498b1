// Max and average pooling on our own kernels, NHWC (NDHWC in 3D), forward and backward side by
// side. 2D is 3D at depth 1 (a window, stride and output of depth 1, no depth padding).
//
//   x [N, D, H, W, C] -> y [N, O, P, Q, C], P = (H + 2 pad_h - KH) / stride_h + 1 (O, Q
//   likewise). The window of output (o, p, q) is planes o stride_d - pad_d + [0, KD), rows
//   p stride_h - pad_h + [0, KH) and columns q stride_w - pad_w + [0, KW), clipped to the
//   volume: padding never takes part.
//
//   max:      y = max over the window. The position that won, as its index (kd KH + kh) KW + kw
//             inside the window, goes to the workspace: one uint8 per output element when the
//             window has at most 256 positions (every CNN's), else one int32. Ties go to the first
//             position in row-major window order (depth, then rows, then columns) (strictly greater
//             replaces), as in the CPU reference (tests/ops/reference.cc). NaN never wins.
//   average:  y = (1 / count) sum over the window, count = its in-bounds positions.
//
//   backward: where small windows (at most 8 positions) tile the input exactly (VGG's 2x2/2), a
//             thread per output writes its window's gradient (no input is in two windows).
//             Where windows overlap by at most one position (ResNet's 3x3/2) and dx is
//             overwritten, a thread per stride block of inputs sums the gather's terms from the
//             2 x 2 outputs that cover it. Otherwise a gather, for both kinds. A thread owns dx at
//             (n, d, h, w, channels) and adds, in a fixed order (o, p, then q, ascending), dy of
//             every output whose window covers it:
//               p in [ceil((h + pad_h - KH + 1) / stride_h), floor((h + pad_h) / stride_h)]
//             clipped to [0, P), o and q likewise. Max adds dy where the saved argmax names (h, w);
//             average adds dy / count. No atomics, so the result is deterministic; ResNet's 3x3/2
//             windows overlap, and an input gathers from up to four.
//             GradMode::kAccumulate adds the old dx; x and y are not read.
//
// Math is in f32. Threads: one per (row, column, pack of kVec channels), a 2D grid with rows
// (n, o, p) or (n, d, h) down and columns x packs across, so the index math is 32-bit and only
// the flat offsets are 64-bit. A pack is 16 bytes (4 f32, 8 f16/bf16) when C is a multiple of
// it and every pointer is 16-byte aligned, else one channel.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// Window positions that a uint8 argmax can name.
constexpr std::int64_t kByteArgmaxPositions = 256;

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

// --- forward ---------------------------------------------------------------------------------

// rows = N O P, one per (n, o, p); columns = Q packs. argmax may be null (average pooling).
template <class T, class Idx, int kVec, PoolKind kKind>
__global__ void pool_forward_kernel(const T* __restrict__ x, PoolGeometry g, std::int64_t rows,
                                    T* __restrict__ y, Idx* __restrict__ argmax) {
  const int packs = g.c / kVec;
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (col >= g.out_w * packs) return;
  const int q = col / packs;
  const int c0 = (col - q * packs) * kVec;
  const int w_start = q * g.stride_w - g.pad_w;
  const int w0 = max(w_start, 0), w1 = min(w_start + g.window_w, g.w);
  for (std::int64_t row = blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += std::int64_t{gridDim.y} * blockDim.y) {
    const auto plane = static_cast<int>(row / g.out_h);  // n O + o
    const int p = static_cast<int>(row - std::int64_t{plane} * g.out_h);
    const int n = plane / g.out_d, o = plane - n * g.out_d;
    const int d_start = o * g.stride_d - g.pad_d, h_start = p * g.stride_h - g.pad_h;
    const int d0 = max(d_start, 0), d1 = min(d_start + g.window_d, g.d);
    const int h0 = max(h_start, 0), h1 = min(h_start + g.window_h, g.h);
    float acc[kVec];
    int best[kVec];
    for (int i = 0; i < kVec; ++i) {  // best starts at the first in-bounds position
      acc[i] = kKind == PoolKind::kMax ? -INFINITY : 0.0f;
      best[i] = ((d0 - d_start) * g.window_h + (h0 - h_start)) * g.window_w + (w0 - w_start);
    }
    for (int dd = d0; dd < d1; ++dd)
      for (int h = h0; h < h1; ++h)
        for (int w = w0; w < w1; ++w) {
          const std::int64_t in = ((std::int64_t{n} * g.d + dd) * g.h + h) * g.w + w;
          const Pack<T, kVec> v = load<T, kVec>(x + in * g.c + c0);
          const int k = ((dd - d_start) * g.window_h + (h - h_start)) * g.window_w + (w - w_start);
          for (int i = 0; i < kVec; ++i) {
            const float f = to_f32(v.v[i]);
            if constexpr (kKind == PoolKind::kMax) {
              if (f > acc[i]) acc[i] = f, best[i] = k;
            } else {
              acc[i] += f;
            }
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

template <class T, class Idx, int kVec, PoolKind kKind>
__global__ void pool_backward_blocked_kernel(const T* __restrict__ dy,
                                             const Idx* __restrict__ argmax, PoolGeometry g,
                                             std::int64_t rows, T* __restrict__ dx) {
  const int packs = g.c / kVec;
  const int rows_per_image = (g.h + g.stride_h - 1) / g.stride_h;  // of stride blocks
  const int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int block_cols = (g.w + g.stride_w - 1) / g.stride_w;
  if (col >= block_cols * packs) return;
  const int bw = col / packs;
  const int c0 = (col - bw * packs) * kVec;
  const int w_first = bw * g.stride_w, w_end = min(w_first + g.stride_w, g.w);
  const int q0 = first_cover(w_first, g.window_w, g.stride_w, g.pad_w);
  const int q1 = last_cover(w_end - 1, g.stride_w, g.pad_w, g.out_w);
  for (std::int64_t row = blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += std::int64_t{gridDim.y} * blockDim.y) {
    const auto n = static_cast<int>(row / rows_per_image);
    const int bh = static_cast<int>(row - std::int64_t{n} * rows_per_image);
    const int h_first = bh * g.stride_h, h_end = min(h_first + g.stride_h, g.h);
    const int p0 = first_cover(h_first, g.window_h, g.stride_h, g.pad_h);
    const int p1 = last_cover(h_end - 1, g.stride_h, g.pad_h, g.out_h);
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
    for (int h = h_first; h < h_end; ++h) {
      const int hp0 = first_cover(h, g.window_h, g.stride_h, g.pad_h);
      const int hp1 = last_cover(h, g.stride_h, g.pad_h, g.out_h);
      for (int w = w_first; w < w_end; ++w) {
        const int wq0 = first_cover(w, g.window_w, g.stride_w, g.pad_w);
        const int wq1 = last_cover(w, g.stride_w, g.pad_w, g.out_w);
        float acc[kVec];
        for (int v = 0; v < kVec; ++v) acc[v] = 0.0f;
#pragma unroll
        for (int i = 0; i < kBlockCover; ++i)
#pragma unroll
          for (int j = 0; j < kBlockCover; ++j) {
            const int p = p0 + i, q = q0 + j;
            if (p < hp0 || p > hp1 || q < wq0 || q > wq1) continue;
            const int h_start = p * g.stride_h - g.pad_h, w_start = q * g.stride_w - g.pad_w;
            if constexpr (kKind == PoolKind::kMax) {
              const int k = (h - h_start) * g.window_w + (w - w_start);
              for (int v = 0; v < kVec; ++v)
                if (static_cast<int>(best[i][j].v[v]) == k) acc[v] += to_f32(grad[i][j].v[v]);
            } else {
              const int rows_in = min(h_start + g.window_h, g.h) - max(h_start, 0);
              const int cols_in = min(w_start + g.window_w, g.w) - max(w_start, 0);
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

// --- launchers -------------------------------------------------------------------------------

// Windows small enough for one thread to write (2x2, 2x2x2: measured on VGG's pools); larger
// ones, as global average pooling's 7x7, keep the gather's thread per input.
constexpr std::int64_t kMaxTiledWindow = 8;

// Whether the windows tile the input exactly and are small (pool_backward_tiled_kernel), with
// rows N O P that an int holds past the grid's last stride.
bool tiles_exactly(const PoolParams& p) {
  constexpr std::int64_t kRowLimit = std::numeric_limits<int>::max() - std::int64_t{65535} * kBlock;
  return p.window_d == p.stride_d && p.window_h == p.stride_h && p.window_w == p.stride_w &&
         p.pad_d == 0 && p.pad_h == 0 && p.pad_w == 0 && p.d == p.out_d() * p.stride_d &&
         p.h == p.out_h() * p.stride_h && p.w == p.out_w() * p.stride_w &&
         p.window_positions() <= kMaxTiledWindow && p.n * p.out_d() * p.out_h() <= kRowLimit;
}

// Whether a thread per stride block writes dx (pool_backward_blocked_kernel): overwriting, 2D
// windows that overlap (wider than their stride on some axis, where the gather re-reads dy) by
// at most one position, so a block's inputs are covered by at most 2 x 2 outputs. Windows
// that do not overlap (global average pooling, odd-sized 2x2/2) were not measured this way and
// keep their kernels.
bool blocks_cover(const PoolParams& p, GradMode mode) {
  return mode == GradMode::kOverwrite && !p.volumetric() &&
         (p.window_h > p.stride_h || p.window_w > p.stride_w) && p.window_h <= p.stride_h + 1 &&
         p.window_w <= p.stride_w + 1;
}

bool byte_argmax(const PoolParams& p) {
  return p.window_positions() <= kByteArgmaxPositions;
}

PoolGeometry geometry(const PoolParams& p, const char* op) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  // Columns x packs and n D (n O) planes are ints in the kernels; the widest column count is
  // C W. A size plus its stride is the end of the last stride block.
  const bool fits = p.n * std::max(p.d, p.out_d()) <= kIntMax &&
                    p.c * std::max(p.w, p.out_w()) <= kIntMax && p.d + 2 * p.pad_d <= kIntMax &&
                    p.h + 2 * p.pad_h <= kIntMax && p.w + 2 * p.pad_w <= kIntMax &&
                    p.d + p.stride_d <= kIntMax && p.h + p.stride_h <= kIntMax &&
                    p.w + p.stride_w <= kIntMax;
  if (!fits)
    throw Error(ErrorKind::kUsage, std::string(op) + ": image row too large for 32-bit indices");
  DLBENCH_CHECK(p.window_d > 0 && p.window_h > 0 && p.window_w > 0 && p.stride_d > 0 &&
                    p.stride_h > 0 && p.stride_w > 0 && p.pad_d >= 0 && p.pad_h >= 0 &&
                    p.pad_w >= 0 && p.pad_d < p.window_d && p.pad_h < p.window_h &&
                    p.pad_w < p.window_w && (p.volumetric() || p.d == 1 && p.window_d == 1),
                "pool window, stride and padding");
  return {static_cast<int>(p.d),
          static_cast<int>(p.h),
          static_cast<int>(p.w),
          static_cast<int>(p.c),
          static_cast<int>(p.out_d()),
          static_cast<int>(p.out_h()),
          static_cast<int>(p.out_w()),
          p.window_d,
          p.window_h,
          p.window_w,
          p.stride_d,
          p.stride_h,
          p.stride_w,
          p.pad_d,
          p.pad_h,
          p.pad_w};
}

// Threads across the columns (a power of two from a warp up to the block, no wider than the
// row needs) and the rest of the block down the rows; the grid strides down rows past 65535.
struct Launch {
  dim3 grid, block;
};

Launch launch_for(std::int64_t rows, std::int64_t columns) {
  unsigned across = 32;
  while (across < columns && across < kBlock) across *= 2;
  const unsigned down = kBlock / across;
  const std::int64_t blocks_down = std::clamp<std::int64_t>((rows + down - 1) / down, 1, 65535);
  return {dim3(static_cast<unsigned>((columns + across - 1) / across),
               static_cast<unsigned>(blocks_down)),
          dim3(across, down)};
}

// Calls f(TypeTag<T>, TypeTag<Idx>, integral_constant<kVec>): 16-byte packs when C is a
// multiple of the pack and every pointer is 16-byte aligned, else one channel; int32 argmax
// (always one channel) for windows a byte cannot index.
template <class F>
void dispatch_pool(const PoolParams& p, DType dtype, std::initializer_list<const void*> data,
                   const char* op, F&& f) {
  dispatch_float(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kWide = 16 / sizeof(T);
    if (p.kind == PoolKind::kMax && !byte_argmax(p))
      return f(tag, TypeTag<std::int32_t>{}, std::integral_constant<int, 1>{});
    bool wide = p.c % kWide == 0;
    for (const void* ptr : data) wide = wide && aligned16(ptr);
    if (wide)
      f(tag, TypeTag<std::uint8_t>{}, std::integral_constant<int, kWide>{});
    else
      f(tag, TypeTag<std::uint8_t>{}, std::integral_constant<int, 1>{});
  });
}

}  // namespace

std::size_t CudaBackend::pool_workspace_bytes(const PoolParams& p) const {
  if (p.kind != PoolKind::kMax) return 0;
  const std::size_t index_bytes = byte_argmax(p) ? sizeof(std::uint8_t) : sizeof(std::int32_t);
  return static_cast<std::size_t>(p.output_shape().numel()) * index_bytes;
}

void CudaBackend::pool_forward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                    const Tensor& workspace) {
  const char* op = "pool_forward";
  activate();
  require_float(x, op, "x"), require_here(x, op, "x"), require_here(y, op, "y");
  const bool max = p.kind == PoolKind::kMax;
  if (max) require_here(workspace, op, "workspace");
  if (x.numel() == 0 || y.numel() == 0) return;
  const PoolGeometry g = geometry(p, op);
  const std::int64_t rows = p.n * p.out_d() * p.out_h();
  void* ws = max ? workspace.data() : nullptr;
  dispatch_pool(p, x.dtype(), {x.data(), y.data(), ws}, op, [&](auto tag, auto idx, auto vec) {
    using T = typename decltype(tag)::type;
    using Idx = typename decltype(idx)::type;
    constexpr int kVec = decltype(vec)::value;
    const Launch l = launch_for(rows, p.out_w() * (p.c / kVec));
    const auto* px = static_cast<const T*>(x.data());
    auto* py = static_cast<T*>(y.data());
    if (max)
      pool_forward_kernel<T, Idx, kVec, PoolKind::kMax>
          <<<l.grid, l.block, 0, stream_>>>(px, g, rows, py, static_cast<Idx*>(ws));
    else
      pool_forward_kernel<T, std::uint8_t, kVec, PoolKind::kAverage>
          <<<l.grid, l.block, 0, stream_>>>(px, g, rows, py, nullptr);
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::pool_backward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, const Tensor& workspace, const Tensor& dx,
                                     GradMode mode) {
  const char* op = "pool_backward";
  activate();
  require_float(x, op, "x");
  for (const Tensor* t : {&x, &y, &dy, &dx}) require_here(*t, op, "operand");
  const bool max = p.kind == PoolKind::kMax;
  if (max) require_here(workspace, op, "workspace");
  if (dx.numel() == 0) return;
  const PoolGeometry g = geometry(p, op);
  const std::int64_t rows = p.n * p.d * p.h;
  const bool accumulate = mode == GradMode::kAccumulate;
  const void* ws = max ? workspace.data() : nullptr;
  dispatch_pool(p, x.dtype(), {dy.data(), dx.data(), ws}, op, [&](auto tag, auto idx, auto vec) {
    using T = typename decltype(tag)::type;
    using Idx = typename decltype(idx)::type;
    constexpr int kVec = decltype(vec)::value;
    const auto* pdy = static_cast<const T*>(dy.data());
    auto* pdx = static_cast<T*>(dx.data());
    if (tiles_exactly(p)) {
      const auto out_rows = static_cast<int>(p.n * p.out_d() * p.out_h());
      const Launch t = launch_for(out_rows, p.out_w() * (p.c / kVec));
      if (max)
        pool_backward_tiled_kernel<T, Idx, kVec, PoolKind::kMax><<<t.grid, t.block, 0, stream_>>>(
            pdy, static_cast<const Idx*>(ws), g, out_rows, accumulate, pdx);
      else
        pool_backward_tiled_kernel<T, std::uint8_t, kVec, PoolKind::kAverage>
            <<<t.grid, t.block, 0, stream_>>>(pdy, nullptr, g, out_rows, accumulate, pdx);
      CUDA_CHECK_LAUNCH();
      return;
    }
    if (blocks_cover(p, mode)) {
      const std::int64_t stride_block_rows = p.n * ((p.h + p.stride_h - 1) / p.stride_h);
      const Launch b =
          launch_for(stride_block_rows, (p.w + p.stride_w - 1) / p.stride_w * (p.c / kVec));
      if (max)
        pool_backward_blocked_kernel<T, Idx, kVec, PoolKind::kMax><<<b.grid, b.block, 0, stream_>>>(
            pdy, static_cast<const Idx*>(ws), g, stride_block_rows, pdx);
      else
        pool_backward_blocked_kernel<T, std::uint8_t, kVec, PoolKind::kAverage>
            <<<b.grid, b.block, 0, stream_>>>(pdy, nullptr, g, stride_block_rows, pdx);
      CUDA_CHECK_LAUNCH();
      return;
    }
    const Launch l = launch_for(rows, p.w * (p.c / kVec));
    if (max)
      pool_backward_kernel<T, Idx, kVec, PoolKind::kMax><<<l.grid, l.block, 0, stream_>>>(
          pdy, static_cast<const Idx*>(ws), g, rows, accumulate, pdx);
    else
      pool_backward_kernel<T, std::uint8_t, kVec, PoolKind::kAverage>
          <<<l.grid, l.block, 0, stream_>>>(pdy, nullptr, g, rows, accumulate, pdx);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
