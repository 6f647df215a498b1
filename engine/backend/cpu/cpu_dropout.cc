// Dropout with its mask drawn from (seed, step, element) (dropout_mask.h), never stored:
//   forward:  step += 1;  y = x / (1 - p) where kept, else 0
//   backward: dx (+)= dy / (1 - p) where kept, the forward's step read again
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/dropout_mask.h"

namespace dlbench::backend::cpu {
namespace {

// out (+)= in * scale where element i is kept, else (+)= 0.
void apply_mask(const DropoutParams& p, std::int32_t step, const float* in, float* out,
                std::int64_t n, bool accumulate) {
  const std::uint64_t key = dropout_key(p.seed, step);
  const float scale = 1.0f / (1.0f - p.probability);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = dropout_keeps(key, i, p.probability) ? in[i] * scale : 0.0f;
    out[i] = accumulate ? out[i] + v : v;
  }
}

}  // namespace

void CpuBackend::dropout_forward_impl(const DropoutParams& p, const Tensor& step, const Tensor& x,
                                      const Tensor& y) {
  const char* op = "dropout_forward";
  require_cpu(step, op, "step"), require_f32(x, op, "x"), require_f32(y, op, "y");
  auto* counter = step.data_as<std::int32_t>();
  *counter += 1;
  apply_mask(p, *counter, x.data_as<float>(), y.data_as<float>(), y.numel(), false);
}

void CpuBackend::dropout_backward_impl(const DropoutParams& p, const Tensor& step, const Tensor& dy,
                                       const Tensor& dx, GradMode mode) {
  const char* op = "dropout_backward";
  require_cpu(step, op, "step"), require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  apply_mask(p, *step.data_as<std::int32_t>(), dy.data_as<float>(), dx.data_as<float>(), dx.numel(),
             mode == GradMode::kAccumulate);
}

}  // namespace dlbench::backend::cpu
