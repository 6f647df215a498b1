// Adam and AdamW (PyTorch's torch.optim.Adam / AdamW, single-tensor path), dense and lazy over
// the touched rows of a table, on flat f32 buffers. At step t (the counter after its increment):
//   AdamW: w = w (1 - lr wd);            Adam: g' = s g + wd w   (else g' = s g)
//   m = m + (1 - beta1)(g' - m);         v = beta2 v + (1 - beta2) g' g'
//   w = w - (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps),   bc1 = 1 - beta1^t, bc2 = 1 - beta2^t
// s is grad_scale, times the clip by global norm where AdamParams::max_grad_norm asks for it.
// The coefficients come from adam_math.h (shared with the CUDA backend); everything per
// element is f32.
#include <algorithm>
#include <cmath>

#include "engine/backend/adam_math.h"
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

// Advances the step counter and derives the step's coefficients from it (and from the
// gradients' sum of squares, where clipping).
AdamCoefficients advance(const AdamParams& p, const Tensor& step, const Tensor& sum_squares,
                         const char* op) {
  require_cpu(step, op, "step");
  auto* counter = step.data_as<std::int32_t>();
  float ss = 0.0f;
  if (sum_squares.defined())
    require_cpu(sum_squares, op, "sum_squares"), ss = *sum_squares.data_as<float>();
  return adam_coefficients(p, ++counter[0], ss);
}

inline void adam_step(float& w, float g, float& m, float& v, const AdamCoefficients& c) {
  w *= c.lr_decay;
  g = c.scale * g + c.l2 * w;
  m += c.one_minus_beta1 * (g - m);
  v = c.beta2 * v + c.one_minus_beta2 * g * g;
  const float denom = std::sqrt(v) / c.bc2_sqrt + c.eps;
  w -= c.step_size * (m / denom);
}

void require_buffers(const Tensor& w, const Tensor& g, const Tensor& m, const Tensor& v,
                     const char* op) {
  require_f32(w, op, "weights"), require_f32(g, op, "grads");
  require_f32(m, op, "m"), require_f32(v, op, "v");
}

}  // namespace

void CpuBackend::adam_update_impl(const AdamParams& p, const Tensor& step, const Tensor& weights,
                                  const Tensor& grads, const Tensor& m, const Tensor& v,
                                  const Tensor& sum_squares) {
  const char* op = "adam_update";
  require_buffers(weights, grads, m, v, op);
  const AdamCoefficients c = advance(p, step, sum_squares, op);
  float* w = weights.data_as<float>();
  const float* g = grads.data_as<float>();
  float* pm = m.data_as<float>();
  float* pv = v.data_as<float>();
  const std::int64_t n = weights.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) adam_step(w[i], g[i], pm[i], pv[i], c);
}

void CpuBackend::sparse_adam_update_impl(const AdamParams& p, const Tensor& step,
                                         const Tensor& weights, const Tensor& grads,
                                         const Tensor& m, const Tensor& v, const Tensor& touched,
                                         const Tensor& sum_squares) {
  const char* op = "sparse_adam_update";
  require_buffers(weights, grads, m, v, op);
  require_cpu(touched, op, "touched");
  const AdamCoefficients c = advance(p, step, sum_squares, op);
  const std::int64_t rows = weights.dim(0), cols = weights.dim(1);
  float* w = weights.data_as<float>();
  const float* g = grads.data_as<float>();
  float* pm = m.data_as<float>();
  float* pv = v.data_as<float>();
  const auto* mark = touched.data_as<std::int32_t>();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    if (mark[r] == 0) continue;
    for (std::int64_t j = r * cols; j < (r + 1) * cols; ++j) adam_step(w[j], g[j], pm[j], pv[j], c);
  }
}

}  // namespace dlbench::backend::cpu
