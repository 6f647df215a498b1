// Dropout on the device, as the CPU backend does it (cpu_dropout.cc): forward advances the step
// counter in a one-thread kernel, then one thread per element redraws its keep bit from
// (seed, step, element) (dropout_mask.h) and scales or zeroes; backward redraws the same bits.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/backend/dropout_mask.h"

namespace dlbench::backend::cuda {
namespace {

template <class T>
__global__ void dropout_kernel(DropoutParams p, const std::int32_t* step, const T* in, T* out,
                               std::int64_t n, bool accumulate) {
  const std::uint64_t key = dropout_key(p.seed, *step);
  const float scale = 1.0f / (1.0f - p.probability);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = dropout_keeps(key, i, p.probability) ? to_f32(in[i]) * scale : 0.0f;
    if (accumulate) v += to_f32(out[i]);
    out[i] = from_f32<T>(v);
  }
}

// out (+)= in / (1 - p) where kept, else (+)= 0.
void dropout_masked(const DropoutParams& p, const Tensor& step, const Tensor& in, const Tensor& out,
                    bool accumulate, cudaStream_t stream, const char* op) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  dispatch_float(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dropout_kernel<T><<<grid_for(n), kBlock, 0, stream>>>(
        p, step.data_as<std::int32_t>(), static_cast<const T*>(in.data()),
        static_cast<T*>(out.data()), n, accumulate);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

void CudaBackend::dropout_forward_impl(const DropoutParams& p, const Tensor& step, const Tensor& x,
                                       const Tensor& y) {
  activate();
  const char* op = "dropout_forward";
  require_here(step, op, "step"), require_here(x, op, "x"), require_here(y, op, "y");
  increment_on_device(step.data_as<std::int32_t>(), stream_);
  dropout_masked(p, step, x, y, false, stream_, op);
}

void CudaBackend::dropout_backward_impl(const DropoutParams& p, const Tensor& step,
                                        const Tensor& dy, const Tensor& dx, GradMode mode) {
  activate();
  const char* op = "dropout_backward";
  require_here(step, op, "step"), require_here(dy, op, "dy"), require_here(dx, op, "dx");
  dropout_masked(p, step, dy, dx, mode == GradMode::kAccumulate, stream_, op);
}

}  // namespace dlbench::backend::cuda
