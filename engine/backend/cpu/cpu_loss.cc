// Mean softmax cross-entropy over the rows of logits [m, classes], and mean sigmoid binary
// cross-entropy over logits [m, 1], with their gradients.
//
//   p[i, j] = exp(z[i, j] - max_j z[i, :]) / sum_j exp(z[i, j] - max_j z[i, :])
//   loss    = (1/m) sum_i -log p[i, label_i]
//           = (1/m) sum_i (log sum_j exp(z[i, j] - max_i) - (z[i, label_i] - max_i))
//   dz[i, j] = scale (p[i, j] - [j == label_i]) / m
// With class weights w, row i counts w[label_i] times and the mean divides by W = sum_i
// w[label_i] instead of m (PyTorch's weighted mean): loss = (1/W) sum_i w[label_i] (-log p[i,
// label_i]), dz[i, j] = scale w[label_i] (p[i, j] - [j == label_i]) / W.
// Rows labelled p.ignore_label are left out of the sum and the divisor (their gradient is 0);
// label smoothing e makes the target (1 - e) onehot + e / classes, so with lse = log sum_j
// exp(z_j - max): loss_i = lse - (1 - e)(z_label - max) - (e / classes) sum_j (z_j - max).
// Subtracting the row maximum keeps exp() from overflowing; the row sums are in double so
// that wide rows (thousands of classes) lose nothing.
//
//   bce loss = (1/m) sum_i max(x_i, 0) - x_i t_i + log1p(exp(-|x_i|))
//   dx_i     = scale (sigmoid(x_i) - t_i) / m
// which is -t log sigmoid(x) - (1 - t) log(1 - sigmoid(x)) without overflow for any x.
//
// Soft Dice over per-pixel softmax scores (Backend::soft_dice), at the end of the file.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

// Labels must be classes, or the ignored label where one is given (ignore: none when unset).
void require_class_labels(const std::int32_t* label, std::int64_t rows, std::int64_t classes,
                          const char* op, std::optional<std::int32_t> ignore = std::nullopt) {
  for (std::int64_t i = 0; i < rows; ++i) {
    if ((label[i] < 0 || label[i] >= classes) && label[i] != ignore)
      throw Error(ErrorKind::kUsage,
                  std::string(op) + ": label " + std::to_string(label[i]) + " of row " +
                      std::to_string(i) + " is outside [0, " + std::to_string(classes) + ")",
                  "labels must be class indices of the model's output (or the ignored label)");
  }
}

// q = softmax(z) of one row of `classes` scores, in double.
void softmax_row(const float* z, std::int64_t classes, double* q) {
  float max = z[0];
  for (std::int64_t j = 1; j < classes; ++j) max = std::fmax(max, z[j]);
  double sum = 0.0;
  for (std::int64_t j = 0; j < classes; ++j)
    sum += q[j] = std::exp(static_cast<double>(z[j] - max));
  for (std::int64_t j = 0; j < classes; ++j) q[j] /= sum;
}

// The loss scale's number (a scale "on the device" is in host memory here).
double scale_value(const LossScale& scale, const char* op) {
  if (!scale.on_device.defined()) return scale.value;
  require_cpu(scale.on_device, op, "loss scale");
  return *scale.on_device.data_as<float>();
}

}  // namespace

void CpuBackend::softmax_cross_entropy_impl(const Tensor& logits, const Tensor& labels,
                                            const Tensor& loss, const Tensor& dlogits,
                                            const LossScale& loss_scale,
                                            const Tensor& class_weights,
                                            const CrossEntropyParams& p) {
  const char* op = "softmax_cross_entropy";
  const double scale = scale_value(loss_scale, op);
  require_f32(logits, op, "logits"), require_f32(dlogits, op, "dlogits");
  require_cpu(labels, op, "labels");
  const std::int64_t rows = logits.dim(0), classes = logits.dim(1);
  const float* z = logits.data_as<float>();
  const auto* label = labels.data_as<std::int32_t>();
  float* dz = dlogits.data_as<float>();
  require_class_labels(label, rows, classes, op, p.ignore_label);
  const float* weight = class_weights.defined() ? class_weights.data_as<float>() : nullptr;
  if (weight) require_cpu(class_weights, op, "class_weights");
  auto counted = [&](std::int64_t i) { return label[i] != p.ignore_label; };
  double weights = 0.0;  // the mean's divisor: the counted rows' weights, or their number
  for (std::int64_t i = 0; i < rows; ++i)
    if (counted(i)) weights += weight ? weight[label[i]] : 1.0;
  const double row_weight = weights > 0 ? 1.0 / weights : 0.0;
  const double smooth = p.label_smoothing, keep = 1.0 - smooth;
  const double spread = smooth / static_cast<double>(classes);
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* zi = z + i * classes;
    float* dzi = dz + i * classes;
    if (!counted(i)) {
      std::fill(dzi, dzi + classes, 0.0f);
      continue;
    }
    float max = zi[0];
    for (std::int64_t j = 1; j < classes; ++j) max = std::fmax(max, zi[j]);
    double sum = 0.0, shifted = 0.0;  // sum of exp(z - max), and of z - max
    for (std::int64_t j = 0; j < classes; ++j) {
      sum += std::exp(static_cast<double>(zi[j] - max));
      if (spread != 0) shifted += static_cast<double>(zi[j] - max);  // -inf logits: no 0 * inf
    }
    const double log_sum = std::log(sum);
    const double w = weight ? weight[label[i]] : 1.0;
    total += w * (log_sum - keep * static_cast<double>(zi[label[i]] - max) - spread * shifted);
    const double g = scale * w * row_weight;
    for (std::int64_t j = 0; j < classes; ++j) {
      const double q = std::exp(static_cast<double>(zi[j] - max) - log_sum);
      dzi[j] = static_cast<float>(g * (q - (j == label[i] ? keep : 0.0) - spread));
    }
  }
  loss.data_as<float>()[0] = static_cast<float>(total * row_weight);
}

void CpuBackend::sigmoid_binary_cross_entropy_impl(const Tensor& logits, const Tensor& targets,
                                                   const Tensor& loss, const Tensor& dlogits,
                                                   const LossScale& loss_scale) {
  const char* op = "sigmoid_binary_cross_entropy";
  const double scale = scale_value(loss_scale, op);
  require_f32(logits, op, "logits"), require_f32(dlogits, op, "dlogits");
  require_f32(targets, op, "targets"), require_f32(loss, op, "loss");
  const std::int64_t rows = logits.dim(0);
  const float* x = logits.data_as<float>();
  const float* t = targets.data_as<float>();
  float* dx = dlogits.data_as<float>();
  const double row_weight = rows > 0 ? 1.0 / static_cast<double>(rows) : 0.0;
  const double g = scale * row_weight;
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (std::int64_t i = 0; i < rows; ++i) {
    const double xi = x[i], ti = t[i];
    const double e = std::exp(-std::fabs(xi));  // in (0, 1]: never overflows
    total += std::fmax(xi, 0.0) - xi * ti + std::log1p(e);
    const double sigmoid = xi >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    dx[i] = static_cast<float>(g * (sigmoid - ti));
  }
  loss.data_as<float>()[0] = static_cast<float>(total * row_weight);
}

// Soft Dice: per sample, the sums I = sum_i q g, P = sum_i q and G = sum_i g of each class
// over its pixels (in double), then dice = (2I + s) / (P + G + s) = A / D and, with w = 1 /
// (samples * counted classes), dloss/dq[i, c] = -w (2 g[i, c] D - A) / D^2 for the counted
// classes, through the softmax: dz[i, j] = scale q[i, j] (dq[i, j] - sum_c q[i, c] dq[i, c]).
void CpuBackend::soft_dice_impl(const SoftDiceParams& p, const Tensor& logits, const Tensor& labels,
                                const Tensor& loss, const Tensor& dlogits,
                                const LossScale& loss_scale, GradMode mode) {
  const char* op = "soft_dice";
  const double scale = scale_value(loss_scale, op);
  require_f32(logits, op, "logits"), require_f32(dlogits, op, "dlogits");
  require_cpu(labels, op, "labels");
  const std::int64_t classes = p.classes, rows = p.samples * p.pixels;
  const float* z = logits.data_as<float>();
  const auto* label = labels.data_as<std::int32_t>();
  float* dz = dlogits.data_as<float>();
  require_class_labels(label, rows, classes, op);
  // Per sample and class: A and D as above.
  std::vector<double> a(static_cast<std::size_t>(p.samples * classes)), d(a.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < p.samples; ++n) {
    std::vector<double> q(static_cast<std::size_t>(classes)), inter(q.size()), pred(q.size()),
        truth(q.size());
    for (std::int64_t i = n * p.pixels; i < (n + 1) * p.pixels; ++i) {
      softmax_row(z + i * classes, classes, q.data());
      for (std::int64_t c = 0; c < classes; ++c) pred[c] += q[c];
      inter[label[i]] += q[label[i]];
      truth[label[i]] += 1.0;
    }
    for (std::int64_t c = 0; c < classes; ++c) {
      a[n * classes + c] = 2.0 * inter[c] + p.smooth;
      d[n * classes + c] = pred[c] + truth[c] + p.smooth;
    }
  }
  const double w = 1.0 / static_cast<double>(p.samples * (classes - p.first_class));
  double mean_dice = 0.0;
  for (std::int64_t n = 0; n < p.samples; ++n)
    for (std::int64_t c = p.first_class; c < classes; ++c)
      mean_dice += w * a[n * classes + c] / d[n * classes + c];
  loss.data_as<float>()[0] = static_cast<float>(1.0 - mean_dice);
#pragma omp parallel
  {
    std::vector<double> q(static_cast<std::size_t>(classes)), dq(q.size(), 0.0);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) {
      softmax_row(z + i * classes, classes, q.data());
      const std::int64_t n = i / p.pixels;
      double dot = 0.0;
      for (std::int64_t c = p.first_class; c < classes; ++c) {
        const double an = a[n * classes + c], dn = d[n * classes + c];
        dq[c] = -w * (2.0 * (label[i] == c ? 1.0 : 0.0) * dn - an) / (dn * dn);
        dot += q[c] * dq[c];
      }
      const bool add = mode == GradMode::kAccumulate;
      for (std::int64_t j = 0; j < classes; ++j)
        dz[i * classes + j] =
            static_cast<float>((add ? dz[i * classes + j] : 0.0) + scale * q[j] * (dq[j] - dot));
    }
  }
}

}  // namespace dlbench::backend::cpu
