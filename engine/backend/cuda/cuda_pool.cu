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
// it and every pointer is 16-byte aligned, else one channel. ResNet's 3x3/2 windows padded by 1
// run the forward and the stride-block backward with their geometry as compile-time constants
// (FixedWindow in cuda_pool_kernels.cuh); every other window reads it at run time.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "engine/backend/cuda/cuda_pool_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// Window positions that a uint8 argmax can name.
constexpr std::int64_t kByteArgmaxPositions = 256;

// --- launchers -------------------------------------------------------------------------------

// Windows small enough for one thread to write (2x2, 2x2x2: measured on VGG's pools); larger
// ones, as global average pooling's 7x7, keep the gather's thread per input.
constexpr std::int64_t kMaxTiledWindow = 8;

// Rows that a kernel's int row index holds past the grid's last stride.
constexpr std::int64_t kRowLimit = std::numeric_limits<int>::max() - std::int64_t{65535} * kBlock;

// Whether the windows tile the input exactly and are small (pool_backward_tiled_kernel), with
// rows N O P that an int holds.
bool tiles_exactly(const PoolParams& p) {
  return p.window_d == p.stride_d && p.window_h == p.stride_h && p.window_w == p.stride_w &&
         p.pad_d == 0 && p.pad_h == 0 && p.pad_w == 0 && p.d == p.out_d() * p.stride_d &&
         p.h == p.out_h() * p.stride_h && p.w == p.out_w() * p.stride_w &&
         p.window_positions() <= kMaxTiledWindow && p.n * p.out_d() * p.out_h() <= kRowLimit;
}

// Whether a thread per stride block writes dx (pool_backward_blocked_kernel): overwriting, 2D
// windows that overlap (wider than their stride on some axis, where the gather re-reads dy) by
// at most one position, so a block's inputs are covered by at most 2 x 2 outputs. Windows
// that do not overlap (global average pooling, odd-sized 2x2/2) were not measured this way and
// keep their kernels. Rows N ceil(H / stride_h) must fit an int.
bool blocks_cover(const PoolParams& p, GradMode mode) {
  return mode == GradMode::kOverwrite && !p.volumetric() &&
         (p.window_h > p.stride_h || p.window_w > p.stride_w) && p.window_h <= p.stride_h + 1 &&
         p.window_w <= p.stride_w + 1 && p.n * ((p.h + p.stride_h - 1) / p.stride_h) <= kRowLimit;
}

// Calls f(FixedWindow<3, 2, 1>{}) for ResNet's stem pooling (2D, 3x3 windows, stride 2, padded
// by 1), whose kernels then fold the geometry into constants, else f(RuntimeWindow{}). On an
// H200 at batch 128 (f16, 112x112x64) the forward took 0.131 ms against 0.163 with the
// run-time window, and forward + backward 0.289 against 0.421 (bf16: 0.140 / 0.305 against
// 0.143 / 0.593). Idx is the argmax's type: a 3x3 window's is always a byte, so only those
// kernels are made with the fixed window.
template <class Idx, class F>
void dispatch_window(const PoolParams& p, F&& f) {
  using Stem = FixedWindow<3, 2, 1>;
  if constexpr (std::is_same_v<Idx, std::uint8_t>) {
    if (!p.volumetric() && p.window_h == Stem::kWindowSize && p.window_w == Stem::kWindowSize &&
        p.stride_h == Stem::kStrideSize && p.stride_w == Stem::kStrideSize &&
        p.pad_h == Stem::kPadSize && p.pad_w == Stem::kPadSize)
      return f(Stem{});
  }
  f(RuntimeWindow{});
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
    dispatch_window<Idx>(p, [&](auto win) {
      using Win = decltype(win);
      if (max)
        pool_forward_kernel<T, Idx, kVec, PoolKind::kMax, Win>
            <<<l.grid, l.block, 0, stream_>>>(px, g, rows, py, static_cast<Idx*>(ws));
      else
        pool_forward_kernel<T, std::uint8_t, kVec, PoolKind::kAverage, Win>
            <<<l.grid, l.block, 0, stream_>>>(px, g, rows, py, nullptr);
    });
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
      const auto stride_block_rows = static_cast<int>(p.n * ((p.h + p.stride_h - 1) / p.stride_h));
      const Launch b =
          launch_for(stride_block_rows, (p.w + p.stride_w - 1) / p.stride_w * (p.c / kVec));
      dispatch_window<Idx>(p, [&](auto win) {
        using Win = decltype(win);
        if (max)
          pool_backward_blocked_kernel<T, Idx, kVec, PoolKind::kMax, Win>
              <<<b.grid, b.block, 0, stream_>>>(pdy, static_cast<const Idx*>(ws), g,
                                                stride_block_rows, pdx);
        else
          pool_backward_blocked_kernel<T, std::uint8_t, kVec, PoolKind::kAverage, Win>
              <<<b.grid, b.block, 0, stream_>>>(pdy, nullptr, g, stride_block_rows, pdx);
      });
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
