// Layer norm over the rows of x [rows, width], in loops over rows (OpenMP) with each row's
// statistics in double: the CPU is the reference the CUDA kernels are held to, and a row of
// BERT's (768 or 1024 values) is small. oneDNN's layer_normalization primitive keeps the
// variance rather than 1 / sqrt(var + eps), so using it would need a pass to convert.
//
//   forward:  m = mean(x), v = mean((x - m)^2), s = 1 / sqrt(v + eps),
//             y = (x - m) s gamma + beta;  saved m and s per row
//   backward: xhat = (x - m) s, g = dy gamma,
//             dx (+)= s (g - mean(g) - xhat mean(g xhat)),
//             dgamma = sum_rows dy xhat, dbeta = sum_rows dy (in double, rows in order)
#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

void CpuBackend::layer_norm_forward_impl(const LayerNormParams& p, const Tensor& x,
                                         const Tensor& gamma, const Tensor& beta, const Tensor& y,
                                         const Tensor& saved_mean, const Tensor& saved_inv_std) {
  const char* op = "layer_norm_forward";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const float* px = x.data_as<float>();
  const float* pg = gamma.data_as<float>();
  const float* pb = beta.data_as<float>();
  float* py = y.data_as<float>();
  float* mean = saved_mean.data_as<float>();
  float* inv_std = saved_inv_std.data_as<float>();
  const std::int64_t w = p.width;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const float* row = px + r * w;
    double sum = 0;
    for (std::int64_t c = 0; c < w; ++c) sum += row[c];
    const double m = sum / static_cast<double>(w);
    double squares = 0;
    for (std::int64_t c = 0; c < w; ++c) squares += (row[c] - m) * (row[c] - m);
    const double s = 1.0 / std::sqrt(squares / static_cast<double>(w) + p.epsilon);
    for (std::int64_t c = 0; c < w; ++c)
      py[r * w + c] = static_cast<float>((row[c] - m) * s * pg[c] + pb[c]);
    mean[r] = static_cast<float>(m);
    inv_std[r] = static_cast<float>(s);
  }
}

void CpuBackend::layer_norm_backward_impl(const LayerNormParams& p, const Tensor& x,
                                          const Tensor& dy, const Tensor& gamma,
                                          const Tensor& saved_mean, const Tensor& saved_inv_std,
                                          const Tensor& dx, GradMode mode, const Tensor& dgamma,
                                          const Tensor& dbeta) {
  const char* op = "layer_norm_backward";
  require_f32(x, op, "x"), require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  const float* px = x.data_as<float>();
  const float* pdy = dy.data_as<float>();
  const float* pg = gamma.data_as<float>();
  const float* mean = saved_mean.data_as<float>();
  const float* inv_std = saved_inv_std.data_as<float>();
  float* pdx = dx.data_as<float>();
  const std::int64_t w = p.width;
  const bool accumulate = mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t base = r * w;
    const double m = mean[r], s = inv_std[r];
    double sum_g = 0, sum_gx = 0;
    for (std::int64_t c = 0; c < w; ++c) {
      const double g = static_cast<double>(pdy[base + c]) * pg[c];
      sum_g += g;
      sum_gx += g * (px[base + c] - m) * s;
    }
    const double mean_g = sum_g / static_cast<double>(w);
    const double mean_gx = sum_gx / static_cast<double>(w);
    for (std::int64_t c = 0; c < w; ++c) {
      const double xhat = (px[base + c] - m) * s;
      const double g = static_cast<double>(pdy[base + c]) * pg[c];
      const double d = s * (g - mean_g - xhat * mean_gx);
      pdx[base + c] = static_cast<float>(accumulate ? pdx[base + c] + d : d);
    }
  }
  // The parameters' gradients: column sums over the rows, rows in order.
  std::vector<double> sum_dy(static_cast<std::size_t>(w), 0.0), sum_dyx(sum_dy);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double m = mean[r], s = inv_std[r];
    for (std::int64_t c = 0; c < w; ++c) {
      const double d = pdy[r * w + c];
      sum_dy[c] += d;
      sum_dyx[c] += d * (px[r * w + c] - m) * s;
    }
  }
  float* pdgamma = dgamma.data_as<float>();
  float* pdbeta = dbeta.data_as<float>();
  for (std::int64_t c = 0; c < w; ++c) {
    pdgamma[c] = static_cast<float>(sum_dyx[c]);
    pdbeta[c] = static_cast<float>(sum_dy[c]);
  }
}

}  // namespace dlbench::backend::cpu
