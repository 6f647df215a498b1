// The door checks of the optimizer ops (Backend::sgd_momentum_update, adam_update,
// sparse_adam_update) and of the gradients' sum of squares that clips them: flat f32 buffers of
// one size, the device step counters, and the clip's input exactly when it is asked for. The
// backends implement the *_impl hooks.
#include <cmath>
#include <string>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {
namespace {

// Clipping by norm: the gradients' sum of squares exactly when the parameters ask for it.
void check_clip(const AdamParams& p, const Tensor& sum_squares, const char* op) {
  DLBENCH_CHECK(std::isfinite(p.max_grad_norm) && p.max_grad_norm >= 0,
                std::string(op) + ": max_grad_norm must be a finite number >= 0");
  DLBENCH_CHECK(sum_squares.defined() == (p.max_grad_norm > 0),
                std::string(op) + ": the gradients' sum of squares exactly when clipping");
  if (sum_squares.defined()) check(sum_squares, {1}, kF32, op, "sum_squares");
}

}  // namespace

void Backend::sgd_momentum_update(const SgdParams& p, const Tensor& weights, const Tensor& grads,
                                  const Tensor& velocity) {
  check(grads, weights.shape(), kF32, "sgd_momentum_update", "grads");
  check(velocity, weights.shape(), kF32, "sgd_momentum_update", "velocity");
  check_dtype(weights, kF32, "sgd_momentum_update", "weights");
  sgd_momentum_update_impl(p, weights, grads, velocity);
}

void Backend::adam_update(const AdamParams& p, const Tensor& step, const Tensor& weights,
                          const Tensor& grads, const Tensor& m, const Tensor& v,
                          const Tensor& sum_squares) {
  const char* op = "adam_update";
  check(step, {1}, DType::kI32, op, "step");
  DLBENCH_CHECK(weights.defined(), "adam_update: weights is not allocated");
  check_dtype(weights, kF32, op, "weights");
  check(grads, weights.shape(), kF32, op, "grads");
  check(m, weights.shape(), kF32, op, "m");
  check(v, weights.shape(), kF32, op, "v");
  check_clip(p, sum_squares, op);
  adam_update_impl(p, step, weights, grads, m, v, sum_squares);
}

void Backend::sparse_adam_update(const AdamParams& p, const Tensor& step, const Tensor& weights,
                                 const Tensor& grads, const Tensor& m, const Tensor& v,
                                 const Tensor& touched, const Tensor& sum_squares) {
  const char* op = "sparse_adam_update";
  check(step, {1}, DType::kI32, op, "step");
  DLBENCH_CHECK(weights.defined() && weights.rank() == 2,
                "sparse_adam_update: weights must be [rows, columns]");
  check_dtype(weights, kF32, op, "weights");
  check(grads, weights.shape(), kF32, op, "grads");
  check(m, weights.shape(), kF32, op, "m");
  check(v, weights.shape(), kF32, op, "v");
  check(touched, {weights.dim(0)}, DType::kI32, op, "touched");
  check_clip(p, sum_squares, op);
  sparse_adam_update_impl(p, step, weights, grads, m, v, touched, sum_squares);
}

void Backend::sum_squares(const Tensor& x, const Tensor& out, GradMode mode) {
  const char* op = "sum_squares";
  DLBENCH_CHECK(x.defined(), "sum_squares: x is not allocated");
  check_dtype(x, kF32, op, "x");
  check(out, {1}, kF32, op, "out");
  sum_squares_impl(x, out, mode);
}

}  // namespace dlbench::backend
