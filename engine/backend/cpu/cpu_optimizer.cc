// SGD with momentum and weight decay, one fused pass over flat parameter buffers
// (PyTorch's convention, so learning rates carry over):
//   g' = g + wd w;   v = momentum v + g';   w = w - lr v
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
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    v[i] = momentum * v[i] + gi;
    w[i] -= lr * v[i];
  }
}

}  // namespace dlbench::backend::cpu
