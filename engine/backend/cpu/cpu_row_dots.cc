// Row-against-candidates dot products (Backend::row_dots_forward / _backward), in f32 loops:
//   y[i, j] = sum_k a[i, k] c[i m + j, k]
//   da[i, :] (+)= sum_j dy[i, j] c[i m + j, :];   dc[i m + j, :] (+)= dy[i, j] a[i, :]
// Each output element is one thread's, summed in index order, so the result does not depend on
// the thread count.
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

void CpuBackend::row_dots_forward_impl(const Tensor& a, const Tensor& c, const Tensor& y) {
  const char* op = "row_dots_forward";
  require_f32(a, op, "a"), require_f32(c, op, "c"), require_f32(y, op, "y");
  const std::int64_t n = a.dim(0), d = a.dim(1), m = y.dim(1);
  const float* pa = a.data_as<float>();
  const float* pc = c.data_as<float>();
  float* py = y.data_as<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < n * m; ++r) {
    const float* row = pa + (r / m) * d;
    const float* cand = pc + r * d;
    float sum = 0.0f;
    for (std::int64_t k = 0; k < d; ++k) sum += row[k] * cand[k];
    py[r] = sum;
  }
}

void CpuBackend::row_dots_backward_impl(const Tensor& a, const Tensor& c, const Tensor& dy,
                                        const Tensor& da, GradMode da_mode, const Tensor& dc,
                                        GradMode dc_mode) {
  const char* op = "row_dots_backward";
  require_f32(a, op, "a"), require_f32(c, op, "c"), require_f32(dy, op, "dy");
  const std::int64_t n = a.dim(0), d = a.dim(1), m = dy.dim(1);
  const float* pa = a.data_as<float>();
  const float* pc = c.data_as<float>();
  const float* pdy = dy.data_as<float>();
  if (da.defined()) {
    require_f32(da, op, "da");
    float* out = da.data_as<float>();
    const bool add = da_mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < d; ++k) {
        float sum = 0.0f;
        for (std::int64_t j = 0; j < m; ++j) sum += pdy[i * m + j] * pc[(i * m + j) * d + k];
        out[i * d + k] = add ? out[i * d + k] + sum : sum;
      }
  }
  if (dc.defined()) {
    require_f32(dc, op, "dc");
    float* out = dc.data_as<float>();
    const bool add = dc_mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < n * m; ++r)
      for (std::int64_t k = 0; k < d; ++k) {
        const float g = pdy[r] * pa[(r / m) * d + k];
        out[r * d + k] = add ? out[r * d + k] + g : g;
      }
  }
}

}  // namespace dlbench::backend::cpu
