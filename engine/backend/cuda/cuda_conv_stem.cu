// ResNet's stem convolution (7x7, stride 2, padding 3, 3 input channels -> 64) on our own
// tensor-core kernel: an implicit GEMM on mma.sync (f16 or bf16 in, f32 accumulation), with the
// bias and ReLU epilogue, and the per-channel sums of y and y^2 a training batch norm takes.
//
// Why: cuDNN 9.14 runs this layer's bf16 forward at about 34 TFLOP/s (1.8-2.2 ms at batch 256
// on an H200, 2026-12-01), and PyTorch's own cuDNN 9.19 as slowly; and in bf16 cuDNN writes no
// statistics, so the batch norm reads y once more for them. This kernel runs the same layer at
// about 138 TFLOP/s (0.44 ms, 0.51 with the sums; prototype, same call). It is timed against
// the route cuDNN's side chose (padded channels, fused statistics and all) and runs where it
// won (stem_route): it has to beat cuDNN's fp16 engines, which are fast here, too. Its weight
// gradient has a kernel of its own (cuda_conv_stem_wgrad.cu).
//
// The kernel: persistent blocks of 4 warps keep the weights (zero-padded from 147 products to
// 160: ten mma k-steps) in shared memory and walk tiles of 128 consecutive output pixels of one
// image. Each tile copies the input rows its pixels read into shared memory (zero columns
// around them stand for the padding); each warp then multiplies 32 pixels by the 64 filters,
// gathering its A fragments from that copy through a per-product offset table. A block keeps
// its statistics in registers and writes one partial per channel; a second kernel sums the
// blocks' partials in double, in block order: deterministic for a given GPU.
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>

#include "engine/backend/cuda/cuda_conv_stem.cuh"

namespace dlbench::backend::cuda {
namespace {

using namespace stem;  // NOLINT: the stem kernels' shared shape and pieces

std::size_t shared_bytes(const Geometry& g) {
  return sizeof(std::uint16_t) * kFilters * kWeightRow + rows_bytes(g);
}

struct StemArgs {
  const void* x;
  const void* w;
  const void* bias;  // null: none
  void* y;
  float* partial;  // [blocks][2][64] with kStats
  int images, h, w_in;
  Geometry g;
  bool relu, vector_rows;  // vector_rows: x's rows copy in 16-byte loads
};

template <class T, bool kStats>
__global__ void __launch_bounds__(kThreads) stem_forward_kernel(StemArgs a) {
  extern __shared__ __align__(16) std::uint16_t shared[];
  std::uint16_t* w_s = shared;                           // [64][kWeightRow]
  std::uint16_t* rows = shared + kFilters * kWeightRow;  // [g.rows][g.row_halves]
  __shared__ int offset[kProductsPadded];
  __shared__ float exchange[kWarps][2][kFilters];
  const int tid = threadIdx.x, warp = tid / kWarp, lane = tid % kWarp;
  const int grp = lane / 4, quad = lane % 4;  // mma's fragment coordinates
  const Geometry& g = a.g;
  const auto* wb = static_cast<const std::uint16_t*>(a.w);
  for (int i = tid; i < kFilters * kWeightRow; i += kThreads) {
    const int n = i / kWeightRow, k = i % kWeightRow;
    w_s[i] = k < kProducts ? wb[n * kProducts + k] : 0;
  }
  // Product k = (kh * 7 + kw) * 3 + c (KRSC order) reads the copy kh rows and kw columns from a
  // pixel's window corner; the padded products read a zero (their weights are zero too).
  for (int k = tid; k < kProductsPadded; k += kThreads)
    offset[k] = k < kProducts ? product_offset(k, g) : -1;
  const int pixels = g.out_h * g.out_w;
  const int row_values = a.w_in * kChannels;
  const auto* x = static_cast<const std::uint16_t*>(a.x);
  const T* bias = static_cast<const T*>(a.bias);
  float s1[8][2] = {}, s2[8][2] = {};
  for_each_tile(a.images, g, rows, [&](int image, int p0, int oh0) {
    copy_rows(x + static_cast<std::size_t>(image) * a.h * row_values, kStride * oh0 - kPad, a.h,
              row_values, a.vector_rows, g, rows);
    __syncthreads();
    // This thread's A rows: pixels warp * 32 + mi * 16 + grp + 8 * hi of the tile (past the
    // image's last pixel, the last one stands in and nothing is stored).
    int base[2][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        base[mi][hi] =
            window_corner(min(p0 + warp * 32 + mi * 16 + grp + 8 * hi, pixels - 1), oh0, g);
      }
    float acc[2][8][4] = {};
#pragma unroll 2
    for (int ks = 0; ks < kProductsPadded / 16; ++ks) {
      const int kb = ks * 16 + 2 * quad;
      const int o[4] = {offset[kb], offset[kb + 1], offset[kb + 8], offset[kb + 9]};
      auto at = [&](int b, int off) -> std::uint16_t { return off >= 0 ? rows[b + off] : 0; };
      std::uint32_t frag[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        frag[mi][0] = pack(at(base[mi][0], o[0]), at(base[mi][0], o[1]));
        frag[mi][1] = pack(at(base[mi][1], o[0]), at(base[mi][1], o[1]));
        frag[mi][2] = pack(at(base[mi][0], o[2]), at(base[mi][0], o[3]));
        frag[mi][3] = pack(at(base[mi][1], o[2]), at(base[mi][1], o[3]));
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const std::uint16_t* wr = &w_s[(8 * j + grp) * kWeightRow + ks * 16 + 2 * quad];
        const std::uint32_t b0 = *reinterpret_cast<const std::uint32_t*>(wr);
        const std::uint32_t b1 = *reinterpret_cast<const std::uint32_t*>(wr + 8);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) Mma<T>::run(acc[mi][j], frag[mi], b0, b1);
      }
    }
    // Each thread holds channels 8j + 2 * quad and + 1 of its four pixels.
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {
        const int p = p0 + warp * 32 + mi * 16 + grp + 8 * hi;
        if (p >= pixels) continue;
        T* yp = static_cast<T*>(a.y) + (static_cast<std::size_t>(image) * pixels + p) * kFilters;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          float v0 = acc[mi][j][2 * hi], v1 = acc[mi][j][2 * hi + 1];
          if (bias != nullptr)  // an inference stem's folded batch norm
            v0 += to_f32(bias[8 * j + 2 * quad]), v1 += to_f32(bias[8 * j + 2 * quad + 1]);
          if (a.relu) v0 = fmaxf(v0, 0.0f), v1 = fmaxf(v1, 0.0f);
          const T r0 = from_f32<T>(v0), r1 = from_f32<T>(v1);
          *reinterpret_cast<std::uint32_t*>(yp + 8 * j + 2 * quad) = pack(bits(r0), bits(r1));
          if constexpr (kStats) {
            const float f0 = to_f32(r0), f1 = to_f32(r1);  // the sums of y as stored
            s1[j][0] += f0, s2[j][0] += f0 * f0;
            s1[j][1] += f1, s2[j][1] += f1 * f1;
          }
        }
      }
  });
  if constexpr (kStats) {
    // Over the 8 lanes of a quad position, then the 4 warps, in a fixed order.
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float u = s1[j][e], v = s2[j][e];
#pragma unroll
        for (int m = 4; m < kWarp; m *= 2) {
          u += __shfl_xor_sync(0xffffffffu, u, m);
          v += __shfl_xor_sync(0xffffffffu, v, m);
        }
        if (grp == 0)
          exchange[warp][0][8 * j + 2 * quad + e] = u, exchange[warp][1][8 * j + 2 * quad + e] = v;
      }
    __syncthreads();
    const int which = tid / kFilters, c = tid % kFilters;  // 128 threads: both sums of 64
    float s = 0;
#pragma unroll
    for (int v = 0; v < kWarps; ++v) s += exchange[v][which][c];
    a.partial[(static_cast<std::size_t>(blockIdx.x) * 2 + which) * kFilters + c] = s;
  }
}
static_assert(kThreads == 2 * kFilters, "the partials' write takes one thread per sum");

// statistics [2][64] = the blocks' partials summed in double, in block order.
__global__ void stem_statistics_kernel(const float* partial, int blocks, float* statistics) {
  const int i = threadIdx.x;  // which * 64 + channel
  double s = 0;
  for (int b = 0; b < blocks; ++b) s += partial[static_cast<std::size_t>(b) * 2 * kFilters + i];
  statistics[i] = static_cast<float>(s);
}

}  // namespace

bool stem_kernel_fits(const ConvParams& p, DType dtype) {
  const bool stem = (dtype == DType::kF16 || dtype == DType::kBF16) && !p.volumetric() &&
                    !p.residual && p.c == kChannels && p.k == kFilters && p.r == kWindow &&
                    p.s == kWindow && p.stride_h == kStride && p.stride_w == kStride &&
                    p.pad_h == kPad && p.pad_w == kPad && p.dilation_h == 1 && p.dilation_w == 1 &&
                    p.h >= 1 && p.w >= 1 && p.n >= 1 &&
                    (p.activation == Activation::kNone || p.activation == Activation::kRelu);
  if (!stem) return false;
  const Geometry g = geometry(p);  // the shape checks above keep its divisions defined
  return shared_bytes(g) <= kSharedLimit &&
         p.n * g.tiles_per_image <= std::numeric_limits<int>::max() / 2;
}

void CudaBackend::stem_forward(const ConvParams& p, DType dtype, const ConvOperands& o,
                               const void* bias, float* statistics) {
  ++stem_passes_;
  const Geometry g = geometry(p);
  const std::size_t shared = shared_bytes(g);
  StemArgs a{o.x,
             o.w,
             bias,
             o.y,
             nullptr,
             static_cast<int>(p.n),
             static_cast<int>(p.h),
             static_cast<int>(p.w),
             g,
             p.activation == Activation::kRelu,
             rows_copy_in_vectors(p, o.x)};
  // stem_kernel_fits admits f16 and bf16 only.
  auto launch = [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_bool(statistics != nullptr, [&](auto with_stats) {
      constexpr bool kStats = decltype(with_stats)::value;
      // Persistent: as many blocks as stay resident (more measured slower in the prototype).
      const int blocks = static_cast<int>(std::min<std::int64_t>(
          p.n * g.tiles_per_image,
          resident_blocks(stem_forward_kernel<T, kStats>, dim3(kThreads), shared)));
      if constexpr (kStats)
        a.partial = static_cast<float*>(scratch(
            stem_partials_, sizeof(float) * 2 * kFilters * static_cast<std::size_t>(blocks)));
      stem_forward_kernel<T, kStats><<<blocks, kThreads, shared, stream_>>>(a);
      CUDA_CHECK_LAUNCH();
      if constexpr (kStats) {
        stem_statistics_kernel<<<1, 2 * kFilters, 0, stream_>>>(a.partial, blocks, statistics);
        CUDA_CHECK_LAUNCH();
      }
    });
  };
  if (dtype == DType::kF16)
    launch(TypeTag<__half>{});
  else
    launch(TypeTag<__nv_bfloat16>{});
}

bool CudaBackend::stem_route(ConvDirection direction, const ConvParams& p, DType dtype,
                             const ConvOperands& o, const std::function<void()>& route,
                             const std::function<void()>& stem) {
  // The forward stores y in 4-byte pairs; the weight gradient loads dy 16 bytes at a time.
  const std::uintptr_t alignment = direction == ConvDirection::kForward ? 4 : 16;
  if (direction == ConvDirection::kBackwardData || !stem_kernel_fits(p, dtype) ||
      reinterpret_cast<std::uintptr_t>(o.y) % alignment != 0 ||
      (conv_route_ != ConvRoute::kStem && !measures_routes()))
    return false;
  if (conv_route_ == ConvRoute::kStem) return true;
  const ConvKey key = conv_key(direction, p, dtype);
  if (const auto it = stem_routes_.find(key); it != stem_routes_.end()) return it->second;
  const auto start = std::chrono::steady_clock::now();
  const double planning_before = planning_time().seconds();
  StemChoice choice{direction, p, dtype, 0.0f, 0.0f, false};
  choice.route_ms = search_ms(route);
  choice.stem_ms = search_ms(stem);
  choice.stem = choice.stem_ms < choice.route_ms;
  stem_routes_.emplace(key, choice.stem);
  stem_choices_.push_back(choice);
  if (choice.stem) fit_padded_operands();  // the pass's padded copy is no longer needed
  // The route's first run may plan its shape (where no padded width was timed), which counts in
  // its own parts.
  stem_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
                   (planning_time().seconds() - planning_before);
  return choice.stem;
}

}  // namespace dlbench::backend::cuda
