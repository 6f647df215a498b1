// The sum of squares of a flat f32 buffer (Backend::sum_squares), for clipping gradients by their
// global norm. Deterministic: one block per chunk of kChunk elements, each thread summing its
// strided elements in f64 and the block adding its threads' sums in a fixed tree; then one block
// adds the chunks' sums the same way. The order depends on the size alone, so the same gradients
// give the same bits on every run (not the CPU's bits: it adds in another order).
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

// The block's threads' values added in a fixed tree; the sum lands in thread 0.
__device__ double block_sum(double v) {
  __shared__ double partial[kBlock];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

__global__ void chunk_squares_kernel(const float* x, std::int64_t n, double* parts) {
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * kChunk;
  const std::int64_t end = begin + kChunk < n ? begin + kChunk : n;
  double s = 0;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kBlock) {
    const double v = x[i];
    s += v * v;
  }
  const double total = block_sum(s);
  if (threadIdx.x == 0) parts[blockIdx.x] = total;
}

__global__ void sum_parts_kernel(const double* parts, std::int64_t count, float* out,
                                 bool accumulate) {
  double s = 0;
  for (std::int64_t i = threadIdx.x; i < count; i += kBlock) s += parts[i];
  const double total = block_sum(s);
  if (threadIdx.x == 0) *out = static_cast<float>(total + (accumulate ? *out : 0.0f));
}

}  // namespace

void CudaBackend::sum_squares_impl(const Tensor& x, const Tensor& out, GradMode mode) {
  activate();
  const char* op = "sum_squares";
  require_here(x, op, "x"), require_here(out, op, "out");
  const std::int64_t n = x.numel();
  const std::int64_t chunks = n == 0 ? 0 : (n + kChunk - 1) / kChunk;
  auto* parts = static_cast<double*>(workspace(static_cast<std::size_t>(chunks) * sizeof(double)));
  if (chunks > 0) {
    chunk_squares_kernel<<<static_cast<unsigned>(chunks), kBlock, 0, stream_>>>(x.data_as<float>(),
                                                                                n, parts);
    CUDA_CHECK_LAUNCH();
  }
  sum_parts_kernel<<<1, kBlock, 0, stream_>>>(parts, chunks, out.data_as<float>(),
                                              mode == GradMode::kAccumulate);
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
