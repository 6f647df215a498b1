// Row-against-candidates dot products (Backend::row_dots_forward / _backward) in f32 on any
// float dtype, rounded once:
//   forward: one warp per y[i, j], lanes over k, then a fixed shuffle tree;
//   da: one thread per da[i, k], summing j in order;  dc: one thread per dc[i m + j, k].
// No atomics: every output has one writer, and a run repeats bit for bit.
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

template <class T>
__global__ void row_dots_forward_kernel(const T* a, const T* c, std::int64_t n, std::int64_t d,
                                        std::int64_t m, T* y) {
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const int lane = threadIdx.x % kWarp;
  for (std::int64_t r =
           static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
       r < n * m; r += warps) {
    const T* row = a + (r / m) * d;
    const T* cand = c + r * d;
    float sum = 0.0f;
    for (std::int64_t k = lane; k < d; k += kWarp) sum += to_f32(row[k]) * to_f32(cand[k]);
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[r] = from_f32<T>(sum);
  }
}

template <class T>
__global__ void row_dots_da_kernel(const T* c, const T* dy, std::int64_t n, std::int64_t d,
                                   std::int64_t m, T* da, bool accumulate) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n * d;
       e += stride) {
    const std::int64_t i = e / d, k = e % d;
    float sum = 0.0f;
    for (std::int64_t j = 0; j < m; ++j)
      sum += to_f32(dy[i * m + j]) * to_f32(c[(i * m + j) * d + k]);
    da[e] = from_f32<T>(accumulate ? to_f32(da[e]) + sum : sum);
  }
}

template <class T>
__global__ void row_dots_dc_kernel(const T* a, const T* dy, std::int64_t n, std::int64_t d,
                                   std::int64_t m, T* dc, bool accumulate) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < n * m * d; e += stride) {
    const std::int64_t r = e / d, k = e % d;
    const float g = to_f32(dy[r]) * to_f32(a[(r / m) * d + k]);
    dc[e] = from_f32<T>(accumulate ? to_f32(dc[e]) + g : g);
  }
}

}  // namespace

void CudaBackend::row_dots_forward_impl(const Tensor& a, const Tensor& c, const Tensor& y) {
  const char* op = "row_dots_forward";
  activate();
  for (const Tensor* t : {&a, &c, &y}) require_here(*t, op, "operand");
  const std::int64_t n = a.dim(0), d = a.dim(1), m = y.dim(1);
  if (n * m == 0) return;
  dispatch_float(a.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    row_dots_forward_kernel<T><<<grid_for(n * m * kWarp), kBlock, 0, stream_>>>(
        static_cast<const T*>(a.data()), static_cast<const T*>(c.data()), n, d, m,
        static_cast<T*>(y.data()));
  });
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::row_dots_backward_impl(const Tensor& a, const Tensor& c, const Tensor& dy,
                                         const Tensor& da, GradMode da_mode, const Tensor& dc,
                                         GradMode dc_mode) {
  const char* op = "row_dots_backward";
  activate();
  for (const Tensor* t : {&a, &c, &dy}) require_here(*t, op, "operand");
  const std::int64_t n = a.dim(0), d = a.dim(1), m = dy.dim(1);
  dispatch_float(a.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* pdy = static_cast<const T*>(dy.data());
    if (da.defined() && n * d > 0) {
      require_here(da, op, "da");
      row_dots_da_kernel<T><<<grid_for(n * d), kBlock, 0, stream_>>>(
          static_cast<const T*>(c.data()), pdy, n, d, m, static_cast<T*>(da.data()),
          da_mode == GradMode::kAccumulate);
      CUDA_CHECK_LAUNCH();
    }
    if (dc.defined() && n * m * d > 0) {
      require_here(dc, op, "dc");
      row_dots_dc_kernel<T><<<grid_for(n * m * d), kBlock, 0, stream_>>>(
          static_cast<const T*>(a.data()), pdy, n, d, m, static_cast<T*>(dc.data()),
          dc_mode == GradMode::kAccumulate);
      CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace dlbench::backend::cuda
