// SGD with momentum and weight decay, one fused pass over flat parameter buffers
// (PyTorch's convention, so learning rates carry over):
//   g' = s g + wd w;   v = momentum v + g';   w = w - lr v   (s: grad_scale)
#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

void CpuBackend::sgd_momentum_update_impl(const SgdParams& p, const Tensor& weights,
                                          const Tensor& grads, const Tensor& velocity) {
  const char* op = "sgd_momentum_update";
  require_f32(weights, op, "weights"), require_f32(grads, op, "grads");
  require_f32(velocity, op, "velocity");
  float* w = weights.data_as<float>();
  const float* g = grads.data_as<float>();
  float* v = velocity.data_as<float>();
  const std::int64_t n = weights.numel();
  const float lr = p.learning_rate, momentum = p.momentum, wd = p.weight_decay;
  const float scale = p.grad_scale;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float gi = scale * g[i] + wd * w[i];
    v[i] = momentum * v[i] + gi;
    w[i] -= lr * v[i];
  }
}

// The CPU computes in f32 only, so a cast is a copy between f32 tensors.
void CpuBackend::cast_impl(const Tensor& src, const Tensor& dst) {
  require_f32(src, "cast", "src"), require_f32(dst, "cast", "dst");
  copy_impl(src, dst);
}

bool CpuBackend::all_finite_impl(const Tensor& t) {
  require_f32(t, "all_finite", "t");
  const float* x = t.data_as<float>();
  const std::int64_t n = t.numel();
  std::int64_t bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (std::int64_t i = 0; i < n; ++i) bad += std::isfinite(x[i]) ? 0 : 1;
  return bad == 0;
}

}  // namespace dlbench::backend::cpu
