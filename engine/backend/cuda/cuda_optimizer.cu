// SGD with momentum and weight decay, one fused pass over flat f32 buffers (PyTorch's
// convention, so learning rates carry over; s is grad_scale, which undoes a loss scale):
//   g' = s g + wd w;   v = momentum v + g';   w = w - lr v
// Four floats per thread and step (16-byte loads) when the buffers are aligned, which they are
// when they come from the arena. The products and sums are rounded one at a time
// (__fmul_rn/__fadd_rn: no fused multiply-add), exactly as the CPU backend computes them, so
// CPU and GPU training take the same steps.
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

struct SgdCoefficients {
  float lr, momentum, wd, scale;
};

__device__ __forceinline__ void sgd_step(float& w, float g, float& v, const SgdCoefficients& c) {
  const float gi = __fadd_rn(__fmul_rn(c.scale, g), __fmul_rn(c.wd, w));
  v = __fadd_rn(__fmul_rn(c.momentum, v), gi);
  w = __fsub_rn(w, __fmul_rn(c.lr, v));
}

__global__ void sgd_kernel(float* w, const float* g, float* v, std::int64_t n, bool vectorized,
                           SgdCoefficients c) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t packs = vectorized ? n / 4 : 0;
  for (std::int64_t i = first; i < packs; i += stride) {
    float4 wi = reinterpret_cast<float4*>(w)[i];
    const float4 gi = reinterpret_cast<const float4*>(g)[i];
    float4 vi = reinterpret_cast<float4*>(v)[i];
    sgd_step(wi.x, gi.x, vi.x, c), sgd_step(wi.y, gi.y, vi.y, c);
    sgd_step(wi.z, gi.z, vi.z, c), sgd_step(wi.w, gi.w, vi.w, c);
    reinterpret_cast<float4*>(w)[i] = wi;
    reinterpret_cast<float4*>(v)[i] = vi;
  }
  for (std::int64_t i = packs * 4 + first; i < n; i += stride) sgd_step(w[i], g[i], v[i], c);
}

}  // namespace

void CudaBackend::sgd_momentum_update_impl(const SgdParams& p, const Tensor& weights,
                                           const Tensor& grads, const Tensor& velocity) {
  const char* op = "sgd_momentum_update";
  activate();
  require_here(weights, op, "weights"), require_here(grads, op, "grads");
  require_here(velocity, op, "velocity");
  const std::int64_t n = weights.numel();
  if (n == 0) return;
  const bool vectorized =
      aligned16(weights.data()) && aligned16(grads.data()) && aligned16(velocity.data());
  sgd_kernel<<<grid_for(vectorized ? n / 4 + 1 : n), kBlock, 0, stream_>>>(
      weights.data_as<float>(), grads.data_as<float>(), velocity.data_as<float>(), n, vectorized,
      {p.learning_rate, p.momentum, p.weight_decay, p.grad_scale});
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
