// Column copies of [rows, width] tensors (split and concatenation along the last axis):
//   dst[:, dst_col + j] (+)= src[:, src_col + j],  j < cols.
// One grid-stride kernel moves 16-byte packs where every row's piece starts aligned (U-Net's
// concatenations join 64 to 512 channels: packs of 8 halves), one element at a time otherwise.
// cudaMemcpy2DAsync moved U-Net's 128-byte rows at under half the memory's speed; it stays the
// route for dtypes without arithmetic (i32 ids), whose copies are bits, not sums.
#include <numeric>

#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

template <class T, int N, bool kAdd>
__global__ void copy_columns_kernel(const T* src, std::int64_t src_width, T* dst,
                                    std::int64_t dst_width, std::int64_t rows, std::int64_t cols) {
  const std::int64_t packs = cols / N, n = rows * packs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride) {
    const std::int64_t r = e / packs, j = (e - r * packs) * N;
    Pack<T, N> v = load<T, N>(src + r * src_width + j);
    T* out = dst + r * dst_width + j;
    if constexpr (kAdd) {
      const Pack<T, N> old = load<T, N>(out);
#pragma unroll
      for (int k = 0; k < N; ++k) v.v[k] = from_f32<T>(to_f32(old.v[k]) + to_f32(v.v[k]));
    }
    store<T, N>(out, v);
  }
}

}  // namespace

void CudaBackend::copy_columns_impl(const Tensor& src, std::int64_t src_col, const Tensor& dst,
                                    std::int64_t dst_col, std::int64_t cols, GradMode mode) {
  const char* op = "copy_columns";
  activate();
  require_here(src, op, "src"), require_here(dst, op, "dst");
  const std::int64_t rows = src.dim(0), src_width = src.dim(1), dst_width = dst.dim(1);
  if (rows == 0 || cols == 0) return;
  const std::size_t size = size_of(src.dtype());
  const auto* from = static_cast<const char*>(src.data()) + src_col * size;
  auto* to = static_cast<char*>(dst.data()) + dst_col * size;
  const bool is_float =
      src.dtype() == DType::kF32 || src.dtype() == DType::kF16 || src.dtype() == DType::kBF16;
  if (!is_float) {  // overwrite only (the layers accumulate float gradients alone): the bits
    DLBENCH_CHECK(mode == GradMode::kOverwrite, "copy_columns: only float columns accumulate");
    CUDA_CHECK(cudaMemcpy2DAsync(to, dst_width * size, from, src_width * size, cols * size, rows,
                                 cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  // Packs fit when the piece's width and both row pitches are multiples of a pack.
  const std::int64_t common = std::gcd(cols, std::gcd(src_width, dst_width));
  dispatch_packs(src.dtype(), common, {from, to}, op, [&](auto tag, auto wide) {
    using T = typename decltype(tag)::type;
    constexpr int N = decltype(wide)::value;
    dispatch_bool(mode == GradMode::kAccumulate, [&](auto add) {
      copy_columns_kernel<T, N, decltype(add)::value>
          <<<grid_for(rows * cols / N), kBlock, 0, stream_>>>(reinterpret_cast<const T*>(from),
                                                              src_width, reinterpret_cast<T*>(to),
                                                              dst_width, rows, cols);
      CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace dlbench::backend::cuda
