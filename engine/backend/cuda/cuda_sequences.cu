// Sequences reversed within their lengths on the device (Backend::reverse_sequences), as the CPU
// backend does it (cpu_sequences.cc): one thread per element, sequence_reverse.h saying which
// row it reads, lengths clamped into [0, steps].
#include "engine/backend/attention_mask.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/backend/sequence_reverse.h"

namespace dlbench::backend::cuda {
namespace {

template <class T>
__global__ void reverse_sequences_kernel(const std::int32_t* lengths, const T* x, T* y,
                                         std::int64_t n, std::int64_t steps, std::int64_t batch,
                                         std::int64_t width, bool accumulate) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::int64_t row = i / width, column = i - row * width;
    const std::int64_t t = row / batch, b = row - t * batch;
    const std::int64_t from = reversed_step(t, clamp_length(lengths, b, steps)) * batch + b;
    const T v = x[from * width + column];
    y[i] = accumulate ? from_f32<T>(to_f32(y[i]) + to_f32(v)) : v;
  }
}

}  // namespace

void CudaBackend::reverse_sequences_impl(const SequenceParams& p, const Tensor& lengths,
                                         const Tensor& x, const Tensor& y, GradMode mode) {
  activate();
  const char* op = "reverse_sequences";
  require_here(lengths, op, "lengths"), require_here(x, op, "x"), require_here(y, op, "y");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  dispatch_float(y.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reverse_sequences_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(
        lengths.data_as<std::int32_t>(), static_cast<const T*>(x.data()), static_cast<T*>(y.data()),
        n, p.steps, p.batch, x.dim(1), mode == GradMode::kAccumulate);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
