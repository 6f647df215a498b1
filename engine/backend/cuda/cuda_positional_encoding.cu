// The Transformer's embedding tail on the device, as the CPU backend computes it
// (cpu_positional_encoding.cc; positional_encoding.h has the encoding):
//   y[r, c] (+)= scale x[r, c] + (encode ? PE(r % sequence, c) : 0)
// One thread per element; the encoding in f32 with the accurate expf, sinf and cosf (not the
// __sinf intrinsics, accurate only in [-pi, pi]: angles reach the sequence's length),
// x and y in their own dtype, rounded once on store.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/backend/positional_encoding.h"

namespace dlbench::backend::cuda {
namespace {

template <class T>
__global__ void positional_encoding_kernel(const T* x, T* y, std::int64_t n, std::int64_t width,
                                           std::int64_t sequence, float scale, float step,
                                           bool encode, bool accumulate) {
  const std::int64_t half = width / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = scale * to_f32(x[i]);
    if (encode) {
      const std::int64_t row = i / width;
      v += positional_encoding_value(row % sequence, i - row * width, half, step);
    }
    if (accumulate) v += to_f32(y[i]);
    y[i] = from_f32<T>(v);
  }
}

}  // namespace

void CudaBackend::positional_encoding_impl(const PositionalEncodingParams& p, const Tensor& x,
                                           const Tensor& y, GradMode mode) {
  activate();
  const char* op = "positional_encoding";
  require_here(x, op, "x"), require_here(y, op, "y");
  const std::int64_t n = y.numel(), width = y.dim(1);
  if (n == 0) return;
  const float step = positional_encoding_step(width);
  dispatch_float(y.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    positional_encoding_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(
        static_cast<const T*>(x.data()), static_cast<T*>(y.data()), n, width, p.sequence, p.scale,
        step, p.encode, mode == GradMode::kAccumulate);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
