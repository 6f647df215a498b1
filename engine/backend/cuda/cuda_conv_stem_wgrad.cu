// ResNet's stem weight gradient (7x7, stride 2, padding 3, 3 input channels -> 64) on our own
// tensor-core kernel: dw [64 filters][147 products] = dy^T [64][pixels] x windows [pixels][147],
// f16 or bf16 in, f32 accumulation, one rounding at the end.
//
// Why: cuDNN 9.14's bf16 stem weight gradient took 0.98 ms at batch 256 on an H200 (0.46 ms in
// fp16; layer profile, 2026-12-01), while the same products run at 0.44 ms in the forward's
// kernel (cuda_conv_stem.cu). It is timed against the route cuDNN's side chose and runs where it
// won (stem_route); bf16 ResNet-50 training gained 1.8 % with it (same call, H200, 2026-12-01).
//
// The kernel: persistent blocks of 4 warps walk tiles of 128 consecutive output pixels of one
// image, as the forward does. Each tile copies dy's 128 x 64 values and the input rows its
// windows read into shared memory; warp w multiplies all 64 filters by products [40w, 40w + 40)
// over the tile's pixels, its A fragments (dy transposed) loaded by ldmatrix.trans and its B
// fragments gathered from the rows' copy at each pixel's window corner. A block keeps its
// 64 x 160 sums in registers and writes them as one partial; a second kernel adds the blocks'
// partials in double, in block order (deterministic for a given GPU), adds dw's old values when
// accumulating, and rounds once.
#include <algorithm>
#include <cstdint>

#include "engine/backend/cuda/cuda_conv_stem.cuh"

namespace dlbench::backend::cuda {
namespace {

using namespace stem;  // NOLINT: the stem kernels' shared shape and pieces

constexpr int kWarpProducts = kProductsPadded / kWarps;  // 40: five n-steps of 8
constexpr int kNSteps = kWarpProducts / 8;
constexpr int kPartial = kFilters * kProductsPadded;  // floats of one block's partial

std::size_t shared_bytes(const Geometry& g) {
  return sizeof(std::uint16_t) * kTile * kDyRow + rows_bytes(g);
}

struct WgradArgs {
  const void* x;
  const void* dy;
  float* partial;  // [blocks][64][160]
  int images, h, w_in;
  Geometry g;
  bool vector_rows;  // x's rows copy in 16-byte loads
};

// Four 8x8 matrices of 16-bit values, each row given by a lane's address, transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

template <class T>
__global__ void __launch_bounds__(kThreads) stem_wgrad_kernel(WgradArgs a) {
  extern __shared__ __align__(16) std::uint16_t shared[];
  std::uint16_t* dy_s = shared;                   // [kTile][kDyRow]
  std::uint16_t* rows = shared + kTile * kDyRow;  // [g.rows][g.row_halves]
  __shared__ int corner[kTile];                   // each pixel's window corner in the rows' copy
  const int tid = threadIdx.x, warp = tid / kWarp, lane = tid % kWarp;
  const int grp = lane / 4, quad = lane % 4;  // mma's fragment coordinates
  const Geometry& g = a.g;
  // This thread's B columns: products warp * 40 + 8j + grp (-1: a padding product, which reads
  // a zero).
  const int n0 = warp * kWarpProducts;
  int offset[kNSteps];
#pragma unroll
  for (int j = 0; j < kNSteps; ++j) {
    const int k = n0 + 8 * j + grp;
    offset[j] = k < kProducts ? product_offset(k, g) : -1;
  }
  const int pixels = g.out_h * g.out_w;
  const int row_values = a.w_in * kChannels;
  const auto* x = static_cast<const std::uint16_t*>(a.x);
  const auto* dy = static_cast<const std::uint16_t*>(a.dy);
  // ldmatrix: lane l gives row l % 8 of matrix l / 8; matrices 0-3 are (filters 0-7, pixels 0-7),
  // (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of a 16 x 16 step: a0..a3 of mma's A.
  const int a_pixel = (lane & 7) + ((lane >> 4) << 3), a_filter = ((lane >> 3) & 1) * 8;
  float acc[4][kNSteps][4] = {};
  for_each_tile(a.images, g, rows, [&](int image, int p0, int oh0) {
    copy_rows(x + static_cast<std::size_t>(image) * a.h * row_values, kStride * oh0 - kPad, a.h,
              row_values, a.vector_rows, g, rows);
    // dy's rows of the tile's pixels, 16 bytes at a time; past the image's last pixel zeros, so
    // those pixels add nothing.
    const std::uint16_t* tile_dy = dy + (static_cast<std::size_t>(image) * pixels + p0) * kFilters;
    for (int i = tid; i < kTile * (kFilters / 8); i += kThreads) {
      const int r = i / (kFilters / 8), q = i % (kFilters / 8);
      uint4 v = make_uint4(0, 0, 0, 0);
      if (p0 + r < pixels) v = reinterpret_cast<const uint4*>(tile_dy + r * kFilters)[q];
      *reinterpret_cast<uint4*>(&dy_s[r * kDyRow + q * 8]) = v;
    }
    // Past the image's last pixel, the last one's window stands in (its dy is zero).
    for (int i = tid; i < kTile; i += kThreads)
      corner[i] = window_corner(min(p0 + i, pixels - 1), oh0, g);
    __syncthreads();
#pragma unroll 2
    for (int ks = 0; ks < kTile / 16; ++ks) {
      std::uint32_t frag[4][4];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
        ldmatrix_x4_trans(frag[mt], &dy_s[(ks * 16 + a_pixel) * kDyRow + mt * 16 + a_filter]);
      // B's rows k = 2 quad, + 1, + 8, + 9 of the step are these pixels.
      const int kb = ks * 16 + 2 * quad;
      const int c[4] = {corner[kb], corner[kb + 1], corner[kb + 8], corner[kb + 9]};
#pragma unroll
      for (int j = 0; j < kNSteps; ++j) {
        if (n0 + 8 * j >= kProducts) continue;  // the warp's steps of padding products only
        const int o = offset[j];
        auto at = [&](int corner_at) -> std::uint16_t { return o >= 0 ? rows[corner_at + o] : 0; };
        const std::uint32_t b0 = pack(at(c[0]), at(c[1])), b1 = pack(at(c[2]), at(c[3]));
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) Mma<T>::run(acc[mt][j], frag[mt], b0, b1);
      }
    }
  });
  // acc[mt][j][e]: filter 16 mt + grp + 8 (e / 2), product n0 + 8j + 2 quad + e % 2.
  float* partial = a.partial + static_cast<std::size_t>(blockIdx.x) * kPartial;
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int j = 0; j < kNSteps; ++j)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        const int filter = 16 * mt + grp + 8 * hi, product = n0 + 8 * j + 2 * quad;
        *reinterpret_cast<float2*>(&partial[filter * kProductsPadded + product]) =
            make_float2(acc[mt][j][2 * hi], acc[mt][j][2 * hi + 1]);
      }
}

// dw [64][147] (+)= the blocks' partials summed in double in block order, rounded once: a block
// of 256 threads takes 32 consecutive outputs of the padded [64][160] layout, its 8 thread rows
// each a fixed eighth of the blocks, added in row order.
constexpr int kReduceColumns = 32, kReduceRows = 8;
template <class T>
__global__ void __launch_bounds__(kReduceColumns* kReduceRows)
    stem_wgrad_reduce_kernel(const float* partial, int blocks, bool accumulate, T* dw) {
  __shared__ double sums[kReduceRows][kReduceColumns];
  const int column = threadIdx.x % kReduceColumns, row = threadIdx.x / kReduceColumns;
  const int out = blockIdx.x * kReduceColumns + column;  // filter * 160 + product
  double s = 0;
  for (int b = row; b < blocks; b += kReduceRows)
    s += partial[static_cast<std::size_t>(b) * kPartial + out];
  sums[row][column] = s;
  __syncthreads();
  if (row != 0) return;
  double total = 0;
#pragma unroll
  for (int r = 0; r < kReduceRows; ++r) total += sums[r][column];
  const int filter = out / kProductsPadded, product = out % kProductsPadded;
  if (product >= kProducts) return;
  T* d = dw + filter * kProducts + product;
  if (accumulate) total += static_cast<double>(to_f32(*d));
  *d = from_f32<T>(static_cast<float>(total));
}
static_assert(kPartial % kReduceColumns == 0, "the reduction's blocks cover the partial exactly");

}  // namespace

void CudaBackend::stem_backward_weights(const ConvParams& p, DType dtype, const ConvOperands& o,
                                        GradMode mode) {
  ++stem_passes_;
  const Geometry g = geometry(p);
  const std::size_t shared = shared_bytes(g);
  WgradArgs a{o.x,
              o.y,
              nullptr,
              static_cast<int>(p.n),
              static_cast<int>(p.h),
              static_cast<int>(p.w),
              g,
              rows_copy_in_vectors(p, o.x)};
  // stem_kernel_fits admits f16 and bf16 only.
  auto launch = [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Persistent: as many blocks as stay resident.
    const int blocks = static_cast<int>(std::min<std::int64_t>(
        p.n * g.tiles_per_image, resident_blocks(stem_wgrad_kernel<T>, dim3(kThreads), shared)));
    a.partial = static_cast<float*>(
        scratch(stem_partials_, sizeof(float) * kPartial * static_cast<std::size_t>(blocks)));
    stem_wgrad_kernel<T><<<blocks, kThreads, shared, stream_>>>(a);
    CUDA_CHECK_LAUNCH();
    stem_wgrad_reduce_kernel<T>
        <<<kPartial / kReduceColumns, kReduceColumns * kReduceRows, 0, stream_>>>(
            a.partial, blocks, mode == GradMode::kAccumulate, static_cast<T*>(o.w));
    CUDA_CHECK_LAUNCH();
  };
  if (dtype == DType::kF16)
    launch(TypeTag<__half>{});
  else
    launch(TypeTag<__nv_bfloat16>{});
}

}  // namespace dlbench::backend::cuda
