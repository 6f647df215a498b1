// The per-step coefficients of Adam and AdamW (PyTorch's torch.optim.Adam / AdamW), shared by
// the CPU backend (computed on the host) and the CUDA backend (computed on the device from the
// device's step counter), so both derive them from one formula. At step t:
//   bc1 = 1 - beta1^t,  bc2 = 1 - beta2^t,  step_size = lr / bc1,  bc2_sqrt = sqrt(bc2)
// computed in double and rounded once, as PyTorch does with Python floats; the update per
// element (f32) stays in each backend, where CUDA pins its rounding with intrinsics.
#pragma once

#include <cmath>

#include "engine/backend/op_params.h"
#include "engine/core/host_device.h"

namespace dlbench::backend {

struct AdamCoefficients {
  float lr_decay;         // 1 - lr wd (AdamW), else 1
  float l2;               // wd (Adam), else 0
  float one_minus_beta1;  // 1 - beta1
  float beta2, one_minus_beta2;
  float step_size;  // lr / bc1
  float bc2_sqrt;   // sqrt(bc2)
  float eps, scale;
};

// The gradients' factor: grad_scale, and with clipping by global norm (p.max_grad_norm > 0) that
// times min(1, max_norm / (norm + 1e-6)), norm = grad_scale sqrt(sum_squares), as PyTorch's
// clip_grad_norm_ computes it (in double, rounded once).
DLBENCH_HOST_DEVICE inline float gradient_scale(const AdamParams& p, float sum_squares) {
  if (!(p.max_grad_norm > 0)) return p.grad_scale;
  const double norm = static_cast<double>(p.grad_scale) * ::sqrt(static_cast<double>(sum_squares));
  const double clip = static_cast<double>(p.max_grad_norm) / (norm + 1e-6);
  return clip < 1.0 ? static_cast<float>(p.grad_scale * clip) : p.grad_scale;
}

// t: the step counter after its increment (1 at the first update); sum_squares: the
// gradients', where clipping (else unread).
DLBENCH_HOST_DEVICE inline AdamCoefficients adam_coefficients(const AdamParams& p, int t,
                                                              float sum_squares = 0.0f) {
  const double bc1 = 1.0 - ::pow(static_cast<double>(p.beta1), static_cast<double>(t));
  const double bc2 = 1.0 - ::pow(static_cast<double>(p.beta2), static_cast<double>(t));
  const double lr = p.learning_rate, wd = p.weight_decay;
  return {static_cast<float>(p.decoupled ? 1.0 - lr * wd : 1.0),
          p.decoupled ? 0.0f : p.weight_decay,
          static_cast<float>(1.0 - static_cast<double>(p.beta1)),
          p.beta2,
          static_cast<float>(1.0 - static_cast<double>(p.beta2)),
          static_cast<float>(lr / bc1),
          static_cast<float>(::sqrt(bc2)),
          p.epsilon,
          gradient_scale(p, sum_squares)};
}

}  // namespace dlbench::backend
