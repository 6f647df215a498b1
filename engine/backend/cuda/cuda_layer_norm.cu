// Layer norm (Backend::layer_norm_forward / _backward) on any float dtype, f32 math:
//   forward:  a warp per row; the row's mean, then the sum of squared deviations (two passes
//             over the row, which stays in L1/L2 at BERT's widths), then y; lane 0 keeps the
//             row's mean and 1 / sqrt(var + eps);
//   backward: a warp per row for dx (the row's mean of g = dy gamma and of g xhat, then dx);
//             the parameters' gradients as column sums over chunks of rows into partials, then
//             lane_column_sums over the chunks.
// Every reduction runs in a fixed order (shuffle trees, no atomics), so a run repeats bit for
// bit.

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

__device__ __forceinline__ float warp_sum(float v) {
  return warp_reduce(v, Add{});
}

template <class T>
__global__ void layer_norm_forward_kernel(const T* x, const float* gamma, const float* beta,
                                          std::int64_t rows, std::int64_t width, float epsilon,
                                          T* y, float* saved_mean, float* saved_inv_std) {
  const std::int64_t r =
      static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (r >= rows) return;
  const T* row = x + r * width;
  float sum = 0.0f;
  for (std::int64_t c = lane; c < width; c += kWarp) sum += to_f32(row[c]);
  const float mean = warp_sum(sum) / static_cast<float>(width);
  float squares = 0.0f;
  for (std::int64_t c = lane; c < width; c += kWarp) {
    const float d = to_f32(row[c]) - mean;
    squares += d * d;
  }
  const float inv_std = rsqrtf(warp_sum(squares) / static_cast<float>(width) + epsilon);
  T* out = y + r * width;
  for (std::int64_t c = lane; c < width; c += kWarp)
    out[c] = from_f32<T>((to_f32(row[c]) - mean) * inv_std * gamma[c] + beta[c]);
  if (lane == 0) {
    saved_mean[r] = mean;
    saved_inv_std[r] = inv_std;
  }
}

template <class T>
__global__ void layer_norm_dx_kernel(const T* x, const T* dy, const float* gamma,
                                     const float* saved_mean, const float* saved_inv_std,
                                     std::int64_t rows, std::int64_t width, bool accumulate,
                                     T* dx) {
  const std::int64_t r =
      static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (r >= rows) return;
  const std::int64_t base = r * width;
  const float mean = saved_mean[r], inv_std = saved_inv_std[r];
  float sum_g = 0.0f, sum_gx = 0.0f;
  for (std::int64_t c = lane; c < width; c += kWarp) {
    const float g = to_f32(dy[base + c]) * gamma[c];
    sum_g += g;
    sum_gx += g * (to_f32(x[base + c]) - mean) * inv_std;
  }
  const float mean_g = warp_sum(sum_g) / static_cast<float>(width);
  const float mean_gx = warp_sum(sum_gx) / static_cast<float>(width);
  for (std::int64_t c = lane; c < width; c += kWarp) {
    const float xhat = (to_f32(x[base + c]) - mean) * inv_std;
    const float g = to_f32(dy[base + c]) * gamma[c];
    float d = inv_std * (g - mean_g - xhat * mean_gx);
    if (accumulate) d += to_f32(dx[base + c]);
    dx[base + c] = from_f32<T>(d);
  }
}

// Pass 1 of dgamma and dbeta: block (x, y) takes columns [32 x, 32 x + 32) over chunk y of the
// rows, its 8 row lanes striding down the chunk, and writes the chunk's sums of dy xhat and of
// dy to partial[y][0][c] and partial[y][1][c].
constexpr int kColumnTile = 32;
constexpr int kRowLanes = 8;

template <class T>
__global__ void layer_norm_params_partial_kernel(const T* x, const T* dy, const float* saved_mean,
                                                 const float* saved_inv_std, std::int64_t rows,
                                                 std::int64_t width, std::int64_t rows_per_chunk,
                                                 float* partial) {
  __shared__ float tile[2][kRowLanes][kColumnTile];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  float dyx = 0.0f, dys = 0.0f;
  if (c < width)
    for (std::int64_t r = begin + threadIdx.y; r < end; r += kRowLanes) {
      const float d = to_f32(dy[r * width + c]);
      dyx += d * (to_f32(x[r * width + c]) - saved_mean[r]) * saved_inv_std[r];
      dys += d;
    }
  tile[0][threadIdx.y][threadIdx.x] = dyx;
  tile[1][threadIdx.y][threadIdx.x] = dys;
  __syncthreads();
  if (threadIdx.y != 0 || c >= width) return;
  for (int i = 1; i < kRowLanes; ++i) {
    dyx += tile[0][i][threadIdx.x];
    dys += tile[1][i][threadIdx.x];
  }
  partial[(static_cast<std::int64_t>(blockIdx.y) * 2 + 0) * width + c] = dyx;
  partial[(static_cast<std::int64_t>(blockIdx.y) * 2 + 1) * width + c] = dys;
}

// Pass 2: each column's chunks in lane_column_sums' fixed order, into dgamma and dbeta.
__global__ void layer_norm_params_final_kernel(const float* partial, std::int64_t chunks,
                                               std::int64_t width, float* dgamma, float* dbeta) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  const LaneSums<float, 2> sums = lane_column_sums<float,
                                                   2>(chunks, c < width, [&](std::int64_t k) {
    return LaneSums<float, 2>{{partial[(k * 2 + 0) * width + c], partial[(k * 2 + 1) * width + c]}};
  });
  if (threadIdx.y == 0 && c < width) {
    dgamma[c] = sums.v[0];
    dbeta[c] = sums.v[1];
  }
}

}  // namespace

void CudaBackend::layer_norm_forward_impl(const LayerNormParams& p, const Tensor& x,
                                          const Tensor& gamma, const Tensor& beta, const Tensor& y,
                                          const Tensor& saved_mean, const Tensor& saved_inv_std) {
  activate();
  const char* op = "layer_norm_forward";
  for (const Tensor* t : {&x, &gamma, &beta, &y, &saved_mean, &saved_inv_std})
    require_here(*t, op, "operand");
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    layer_norm_forward_kernel<T><<<warp_row_blocks(p.rows), kBlock, 0, stream_>>>(
        static_cast<const T*>(x.data()), gamma.data_as<float>(), beta.data_as<float>(), p.rows,
        p.width, p.epsilon, static_cast<T*>(y.data()), saved_mean.data_as<float>(),
        saved_inv_std.data_as<float>());
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::layer_norm_backward_impl(const LayerNormParams& p, const Tensor& x,
                                           const Tensor& dy, const Tensor& gamma,
                                           const Tensor& saved_mean, const Tensor& saved_inv_std,
                                           const Tensor& dx, GradMode mode, const Tensor& dgamma,
                                           const Tensor& dbeta) {
  activate();
  const char* op = "layer_norm_backward";
  for (const Tensor* t : {&x, &dy, &gamma, &saved_mean, &saved_inv_std, &dx, &dgamma, &dbeta})
    require_here(*t, op, "operand");
  const auto [chunks, rows_per_chunk] = row_chunks(p.rows);
  auto* partial = static_cast<float*>(workspace(sizeof(float) * chunks * 2 * p.width));
  dispatch_float(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* px = static_cast<const T*>(x.data());
    const auto* pdy = static_cast<const T*>(dy.data());
    layer_norm_dx_kernel<T><<<warp_row_blocks(p.rows), kBlock, 0, stream_>>>(
        px, pdy, gamma.data_as<float>(), saved_mean.data_as<float>(),
        saved_inv_std.data_as<float>(), p.rows, p.width, mode == GradMode::kAccumulate,
        static_cast<T*>(dx.data()));
    CUDA_CHECK_LAUNCH();
    const dim3 grid(static_cast<unsigned>((p.width + kColumnTile - 1) / kColumnTile),
                    static_cast<unsigned>(chunks));
    layer_norm_params_partial_kernel<T><<<grid, dim3(kColumnTile, kRowLanes), 0, stream_>>>(
        px, pdy, saved_mean.data_as<float>(), saved_inv_std.data_as<float>(), p.rows, p.width,
        rows_per_chunk, partial);
    CUDA_CHECK_LAUNCH();
  });
  layer_norm_params_final_kernel<<<static_cast<unsigned>((p.width + kLanes - 1) / kLanes),
                                   dim3(kLanes, kLanes), 0, stream_>>>(
      partial, chunks, p.width, dgamma.data_as<float>(), dbeta.data_as<float>());
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
