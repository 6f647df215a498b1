// What ResNet's two stem kernels share (cuda_conv_stem.cu, the forward; cuda_conv_stem_wgrad.cu,
// the weight gradient): the layer's shape (7x7, stride 2, padding 3, 3 input channels -> 64),
// the tiles of 128 consecutive output pixels of one image, the shared-memory copy of the input
// rows a tile's windows read (zero columns around them stand for the padding), where each
// pixel's window starts in that copy, and the f16/bf16 tensor-core product.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda::stem {

constexpr int kChannels = 3, kFilters = 64, kWindow = 7, kStride = 2, kPad = 3;
constexpr int kProducts = kWindow * kWindow * kChannels;  // 147, in KRSC order
constexpr int kProductsPadded = 160;                      // ten mma k- or n-steps of 16
constexpr int kTile = 128;                                // output pixels per tile
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
// Zero columns left of the copied rows: at least the padding, and 8 so each row's copy starts
// 16 bytes in.
constexpr int kLeftColumns = 8;
// What one block may keep in shared memory, within the 48 KiB a launch gets without opting in
// (224x224 inputs take 40 KiB in the forward).
constexpr std::size_t kSharedLimit = 48 << 10;
// Halves per filter of the forward's weights in shared memory (rows 20 banks apart), and per
// pixel of the weight gradient's copy of dy (144 bytes, so the 8 rows one ldmatrix reads fall in
// distinct banks). Both add the input rows' copy: wherever the forward fits, so does the gradient.
constexpr int kWeightRow = 168, kDyRow = 72;
static_assert(kTile * kDyRow <= kFilters * kWeightRow, "the gradient's copies are the smaller");

// The input rows one tile's copy holds, and each row's width in halves.
struct Geometry {
  int out_h, out_w, rows, row_halves, tiles_per_image;
};
inline Geometry geometry(const ConvParams& p) {
  Geometry g;
  g.out_h = static_cast<int>(p.out_h()), g.out_w = static_cast<int>(p.out_w());
  // 128 consecutive pixels span at most 127 / out_w + 2 output rows, which read 2 apart and
  // kWindow deep.
  const int span = std::min(g.out_h, (kTile - 1) / g.out_w + 2);
  g.rows = kStride * (span - 1) + kWindow;
  // The rightmost column read is 2 * (out_w - 1) - 3 + 6 <= w + 2; rows stay 16-byte multiples.
  const int columns = (kLeftColumns + static_cast<int>(p.w) + kPad + 7) / 8 * 8;
  g.row_halves = columns * kChannels;
  g.tiles_per_image = (g.out_h * g.out_w + kTile - 1) / kTile;
  return g;
}
inline std::size_t rows_bytes(const Geometry& g) {
  return sizeof(std::uint16_t) * static_cast<std::size_t>(g.rows) *
         static_cast<std::size_t>(g.row_halves);
}

// Whether x's rows copy 16 bytes at a time: they are whole 16-byte runs, and x starts on one.
inline bool rows_copy_in_vectors(const ConvParams& p, const void* x) {
  return p.w * kChannels % 8 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
}

// Product k = (kh * 7 + kw) * 3 + c reads the copy kh rows and kw columns from a pixel's window
// corner.
__device__ __forceinline__ int product_offset(int k, const Geometry& g) {
  const int c = k % kChannels, rs = k / kChannels;
  return (rs / kWindow) * g.row_halves + (rs % kWindow) * kChannels + c;
}
// Where output pixel p's window starts in the copy of the rows from input row ih0 = 2 oh0 - 3.
__device__ __forceinline__ int window_corner(int p, int oh0, const Geometry& g) {
  const int oh = p / g.out_w, ow = p % g.out_w;
  return kStride * (oh - oh0) * g.row_halves + (kStride * ow - kPad + kLeftColumns) * kChannels;
}

// Copies the g.rows input rows from ih0 of one image (rows of row_values halves; zeros above
// and below the image) into the block's copy, after its left zero columns; 16 bytes at a time
// where rows are whole 16-byte runs. The columns around them are zeroed once, before the first
// tile, and never written.
__device__ __forceinline__ void copy_rows(const std::uint16_t* image_x, int ih0, int h,
                                          int row_values, bool vector_rows, const Geometry& g,
                                          std::uint16_t* rows) {
  if (vector_rows) {
    const int vectors = row_values / 8;
    for (int i = static_cast<int>(threadIdx.x); i < g.rows * vectors; i += kThreads) {
      const int r = i / vectors, q = i % vectors, ih = ih0 + r;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (ih >= 0 && ih < h)
        v = reinterpret_cast<const uint4*>(image_x + static_cast<std::size_t>(ih) * row_values)[q];
      *reinterpret_cast<uint4*>(&rows[r * g.row_halves + kLeftColumns * kChannels + q * 8]) = v;
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < g.rows * row_values; i += kThreads) {
      const int r = i / row_values, q = i % row_values, ih = ih0 + r;
      rows[r * g.row_halves + kLeftColumns * kChannels + q] =
          ih >= 0 && ih < h ? image_x[static_cast<std::size_t>(ih) * row_values + q] : 0;
    }
  }
}

// Zeroes the block's copy of the rows (the columns around the copied rows stay zero), then runs
// tile(image, p0, oh0) for each of the block's tiles, persistent over the grid: the tile of
// pixels [p0, p0 + 128) of an image, starting at output row oh0, after a barrier (the last
// tile's reads of the shared copies are done).
template <class Tile>
__device__ __forceinline__ void for_each_tile(int images, const Geometry& g, std::uint16_t* rows,
                                              Tile&& tile) {
  for (int i = static_cast<int>(threadIdx.x); i < g.rows * g.row_halves; i += kThreads) rows[i] = 0;
  const int tiles = images * g.tiles_per_image;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int p0 = (t % g.tiles_per_image) * kTile;
    __syncthreads();
    tile(t / g.tiles_per_image, p0, p0 / g.out_w);
  }
}

// One specialization per dtype: the operand types are part of the PTX instruction's name.
template <class T>
struct Mma;
template <>
struct Mma<__half> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

__device__ __forceinline__ std::uint32_t pack(std::uint16_t lo, std::uint16_t hi) {
  return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
}
// A value's bits, for packed stores: the forward stores y's pairs as one 32-bit value
// (Pack<T, 2>'s store compiles to st.v2.u16 there, and a cubin 1.5 KB larger).
template <class T>
__device__ __forceinline__ std::uint16_t bits(T v) {
  std::uint16_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

}  // namespace dlbench::backend::cuda::stem
