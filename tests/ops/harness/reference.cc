#include "tests/ops/harness/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dlbench::ref {
namespace {

// Flat indices of the house layouts.
std::int64_t nhwc(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t H,
                  std::int64_t W, std::int64_t C) {
  return ((n * H + h) * W + w) * C + c;
}

// Calls f(y_index, x_index, w_index) for every multiply-accumulate of a convolution, skipping
// taps that fall into the zero padding. All three conv passes are sums over this one set. 2D
// is 3D of depth 1 (d, t, out_d 1, pad 0): the same flat indices.
template <class F>
void for_each_conv_tap(const ConvParams& p, F&& f) {
  const std::int64_t od = p.out_d(), oh = p.out_h(), ow = p.out_w();
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t o = 0; o < od; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j)
          for (std::int64_t k = 0; k < p.k; ++k)
            for (std::int64_t t = 0; t < p.t; ++t) {
              const std::int64_t z = o * p.stride_d - p.pad_d + t * p.dilation_d;
              if (z < 0 || z >= p.d) continue;
              for (std::int64_t r = 0; r < p.r; ++r) {
                const std::int64_t h = i * p.stride_h - p.pad_h + r * p.dilation_h;
                if (h < 0 || h >= p.h) continue;
                for (std::int64_t s = 0; s < p.s; ++s) {
                  const std::int64_t w = j * p.stride_w - p.pad_w + s * p.dilation_w;
                  if (w < 0 || w >= p.w) continue;
                  for (std::int64_t c = 0; c < p.c; ++c)
                    f(nhwc(n * od + o, i, j, k, oh, ow, p.k),
                      nhwc(n * p.d + z, h, w, c, p.h, p.w, p.c),
                      (((k * p.t + t) * p.r + r) * p.s + s) * p.c + c);
                }
              }
            }
}

// Calls f(y_index, x_index, window_count) for each in-bounds element of each pooling window,
// in window order (depth, rows, columns); window_count is the number of in-bounds elements
// (average pooling's divisor). 2D is depth 1.
template <class F>
void for_each_pool_tap(const PoolParams& p, F&& f) {
  const std::int64_t od = p.out_d(), oh = p.out_h(), ow = p.out_w();
  auto range = [](std::int64_t o, int stride, int pad, int window, std::int64_t extent) {
    const std::int64_t start = o * stride - pad;
    return std::pair{std::max<std::int64_t>(start, 0),
                     std::min<std::int64_t>(start + window, extent)};
  };
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t o = 0; o < od; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          const auto [d0, d1] = range(o, p.stride_d, p.pad_d, p.window_d, p.d);
          const auto [h0, h1] = range(i, p.stride_h, p.pad_h, p.window_h, p.h);
          const auto [w0, w1] = range(j, p.stride_w, p.pad_w, p.window_w, p.w);
          const std::int64_t count = (d1 - d0) * (h1 - h0) * (w1 - w0);
          for (std::int64_t c = 0; c < p.c; ++c)
            for (std::int64_t z = d0; z < d1; ++z)
              for (std::int64_t h = h0; h < h1; ++h)
                for (std::int64_t w = w0; w < w1; ++w)
                  f(nhwc(n * od + o, i, j, c, oh, ow, p.c),
                    nhwc(n * p.d + z, h, w, c, p.h, p.w, p.c), count);
        }
}

}  // namespace

Vec conv_forward(const ConvParams& p, const Vec& x, const Vec& w, const Vec& bias,
                 const Vec& residual) {
  Vec y(p.output_shape().numel(), 0.0);
  if (p.bias)
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = bias[i % p.k];
  for_each_conv_tap(
      p, [&](std::int64_t yi, std::int64_t xi, std::int64_t wi) { y[yi] += x[xi] * w[wi]; });
  if (p.residual)
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += residual[i];
  if (p.activation == backend::Activation::kRelu)
    for (double& v : y) v = std::max(v, 0.0);
  return y;
}

Vec conv_backward_data(const ConvParams& p, const Vec& dy, const Vec& w) {
  Vec dx(p.input_shape().numel(), 0.0);
  for_each_conv_tap(
      p, [&](std::int64_t yi, std::int64_t xi, std::int64_t wi) { dx[xi] += dy[yi] * w[wi]; });
  return dx;
}

WeightGrads conv_backward_weights(const ConvParams& p, const Vec& x, const Vec& dy) {
  WeightGrads g{Vec(p.weight_shape().numel(), 0.0), {}};
  for_each_conv_tap(
      p, [&](std::int64_t yi, std::int64_t xi, std::int64_t wi) { g.dw[wi] += dy[yi] * x[xi]; });
  if (p.bias) {
    g.dbias.assign(p.k, 0.0);
    for (std::size_t i = 0; i < dy.size(); ++i) g.dbias[i % p.k] += dy[i];
  }
  return g;
}

BatchNormTraining batch_norm_forward_training(const BatchNormParams& p, const Vec& x,
                                              const Vec& gamma, const Vec& beta,
                                              const Vec& running_mean, const Vec& running_var) {
  const std::int64_t R = p.rows, C = p.channels;
  BatchNormTraining t{Vec(x.size()), Vec(C, 0.0), Vec(C), running_mean, running_var};
  for (std::int64_t c = 0; c < C; ++c) {
    double sum = 0;
    for (std::int64_t r = 0; r < R; ++r) sum += x[r * C + c];
    const double mean = sum / R;
    double sq = 0;
    for (std::int64_t r = 0; r < R; ++r) sq += (x[r * C + c] - mean) * (x[r * C + c] - mean);
    const double var = sq / R;  // biased: what normalizes this batch
    const double inv_std = 1.0 / std::sqrt(var + p.epsilon);
    for (std::int64_t r = 0; r < R; ++r)
      t.y[r * C + c] = gamma[c] * (x[r * C + c] - mean) * inv_std + beta[c];
    t.mean[c] = mean;
    t.inv_std[c] = inv_std;
    const double m = p.momentum;
    t.running_mean[c] = (1 - m) * running_mean[c] + m * mean;
    t.running_var[c] = (1 - m) * running_var[c] + m * (R > 1 ? sq / (R - 1) : var);
  }
  return t;
}

Vec batch_norm_forward_inference(const BatchNormParams& p, const Vec& x, const Vec& gamma,
                                 const Vec& beta, const Vec& running_mean, const Vec& running_var) {
  const std::int64_t C = p.channels;
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t c = static_cast<std::int64_t>(i) % C;
    y[i] = gamma[c] * (x[i] - running_mean[c]) / std::sqrt(running_var[c] + p.epsilon) + beta[c];
  }
  return y;
}

BatchNormGrads batch_norm_backward(const BatchNormParams& p, const Vec& x, const Vec& dy,
                                   const Vec& gamma, const Vec& mean, const Vec& inv_std) {
  const std::int64_t R = p.rows, C = p.channels;
  BatchNormGrads g{Vec(x.size()), Vec(C, 0.0), Vec(C, 0.0)};
  for (std::int64_t c = 0; c < C; ++c) {
    for (std::int64_t r = 0; r < R; ++r) {
      const double xhat = (x[r * C + c] - mean[c]) * inv_std[c];
      g.dbeta[c] += dy[r * C + c];
      g.dgamma[c] += dy[r * C + c] * xhat;
    }
    for (std::int64_t r = 0; r < R; ++r) {
      const double xhat = (x[r * C + c] - mean[c]) * inv_std[c];
      g.dx[r * C + c] =
          gamma[c] * inv_std[c] * (dy[r * C + c] - g.dbeta[c] / R - xhat * g.dgamma[c] / R);
    }
  }
  return g;
}

Vec pool_forward(const PoolParams& p, const Vec& x) {
  const bool max = p.kind == backend::PoolKind::kMax;
  Vec y(p.output_shape().numel(), max ? -std::numeric_limits<double>::infinity() : 0.0);
  for_each_pool_tap(p, [&](std::int64_t yi, std::int64_t xi, std::int64_t count) {
    if (max)
      y[yi] = std::max(y[yi], x[xi]);
    else
      y[yi] += x[xi] / count;
  });
  return y;
}

Vec pool_backward(const PoolParams& p, const Vec& x, const Vec& dy) {
  Vec dx(x.size(), 0.0);
  if (p.kind == backend::PoolKind::kAverage) {
    for_each_pool_tap(
        p, [&](std::int64_t yi, std::int64_t xi, std::int64_t count) { dx[xi] += dy[yi] / count; });
    return dx;
  }
  // Max: each output's gradient goes to the first position holding its maximum.
  const Vec y = pool_forward(p, x);
  std::vector<bool> routed(y.size(), false);
  for_each_pool_tap(p, [&](std::int64_t yi, std::int64_t xi, std::int64_t) {
    if (!routed[yi] && x[xi] == y[yi]) {
      dx[xi] += dy[yi];
      routed[yi] = true;
    }
  });
  return dx;
}

Vec matmul_forward(const MatmulParams& p, const Vec& x, const Vec& w, const Vec& bias) {
  Vec y(p.m * p.n);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double acc = p.bias ? bias[j] : 0.0;
      for (std::int64_t k = 0; k < p.k; ++k) acc += x[i * p.k + k] * w[j * p.k + k];
      y[i * p.n + j] = p.activation == backend::Activation::kRelu ? std::max(acc, 0.0) : acc;
    }
  return y;
}

Vec matmul_backward_data(const MatmulParams& p, const Vec& dy, const Vec& w) {
  Vec dx(p.m * p.k, 0.0);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t k = 0; k < p.k; ++k) dx[i * p.k + k] += dy[i * p.n + j] * w[j * p.k + k];
  return dx;
}

WeightGrads matmul_backward_weights(const MatmulParams& p, const Vec& x, const Vec& dy) {
  WeightGrads g{Vec(p.n * p.k, 0.0), {}};
  if (p.bias) g.dbias.assign(p.n, 0.0);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t k = 0; k < p.k; ++k) g.dw[j * p.k + k] += dy[i * p.n + j] * x[i * p.k + k];
      if (p.bias) g.dbias[j] += dy[i * p.n + j];
    }
  return g;
}

Vec relu_forward(const Vec& x) {
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0;
  return y;
}

Vec relu_backward(const Vec& y, const Vec& dy) {
  Vec dx(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) dx[i] = y[i] > 0 ? dy[i] : 0.0;
  return dx;
}

// GELU's tanh form: x (1 + tanh(u)) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3).
Vec gelu_forward(const Vec& x) {
  const double c = std::sqrt(2 / std::acos(-1.0));
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = 0.5 * x[i] * (1 + std::tanh(c * (x[i] + 0.044715 * x[i] * x[i] * x[i])));
  return y;
}

Vec gelu_backward(const Vec& x, const Vec& dy) {
  const double c = std::sqrt(2 / std::acos(-1.0));
  Vec dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = std::tanh(c * (x[i] + 0.044715 * x[i] * x[i] * x[i]));
    const double du = c * (1 + 3 * 0.044715 * x[i] * x[i]);
    dx[i] = dy[i] * (0.5 * (1 + t) + 0.5 * x[i] * (1 - t * t) * du);
  }
  return dx;
}

Vec tanh_forward(const Vec& x) {
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::tanh(x[i]);
  return y;
}

Vec tanh_backward(const Vec& x, const Vec& dy) {
  Vec dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = dy[i] / (std::cosh(x[i]) * std::cosh(x[i]));
  return dx;
}

Vec positional_encoding(const backend::PositionalEncodingParams& p, std::int64_t width,
                        const Vec& x) {
  const std::int64_t half = width / 2, rows = static_cast<std::int64_t>(x.size()) / width;
  const double intervals = static_cast<double>(std::max<std::int64_t>(half - 1, 1));
  Vec y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto position = static_cast<double>(r % p.sequence);
    for (std::int64_t j = 0; j < half; ++j) {
      const double frequency = std::exp(-std::log(10000.0) * static_cast<double>(j) / intervals);
      const std::int64_t sine = r * width + j, cosine = sine + half;
      y[sine] = p.scale * x[sine] + (p.encode ? std::sin(position * frequency) : 0.0);
      y[cosine] = p.scale * x[cosine] + (p.encode ? std::cos(position * frequency) : 0.0);
    }
  }
  return y;
}

LayerNormForward layer_norm_forward(const backend::LayerNormParams& p, const Vec& x,
                                    const Vec& gamma, const Vec& beta) {
  const std::size_t rows = static_cast<std::size_t>(p.rows), w = static_cast<std::size_t>(p.width);
  LayerNormForward f{Vec(x.size()), Vec(rows), Vec(rows)};
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t c = 0; c < w; ++c) mean += x[r * w + c] / static_cast<double>(w);
    for (std::size_t c = 0; c < w; ++c)
      var += (x[r * w + c] - mean) * (x[r * w + c] - mean) / static_cast<double>(w);
    f.mean[r] = mean;
    f.inv_std[r] = 1 / std::sqrt(var + p.epsilon);
    for (std::size_t c = 0; c < w; ++c)
      f.y[r * w + c] = (x[r * w + c] - mean) * f.inv_std[r] * gamma[c] + beta[c];
  }
  return f;
}

LayerNormGrads layer_norm_backward(const backend::LayerNormParams& p, const Vec& x, const Vec& dy,
                                   const Vec& gamma) {
  const std::size_t rows = static_cast<std::size_t>(p.rows), w = static_cast<std::size_t>(p.width);
  const LayerNormForward f = layer_norm_forward(p, x, gamma, Vec(w, 0.0));
  LayerNormGrads g{Vec(x.size(), 0.0), Vec(w, 0.0), Vec(w, 0.0)};
  for (std::size_t r = 0; r < rows; ++r) {
    const double s = f.inv_std[r];
    auto xhat = [&](std::size_t c) { return (x[r * w + c] - f.mean[r]) * s; };
    // d xhat_i / d x_j = s (delta_ij - 1/w - xhat_i xhat_j / w), with y_i = gamma_i xhat_i +
    // beta_i.
    for (std::size_t j = 0; j < w; ++j)
      for (std::size_t i = 0; i < w; ++i) {
        const double jac = s * ((i == j ? 1.0 : 0.0) - 1.0 / static_cast<double>(w) -
                                xhat(i) * xhat(j) / static_cast<double>(w));
        g.dx[r * w + j] += dy[r * w + i] * gamma[i] * jac;
      }
    for (std::size_t c = 0; c < w; ++c) {
      g.dgamma[c] += dy[r * w + c] * xhat(c);
      g.dbeta[c] += dy[r * w + c];
    }
  }
  return g;
}

SoftmaxCrossEntropy softmax_cross_entropy(std::int64_t rows, std::int64_t classes,
                                          const Vec& logits,
                                          const std::vector<std::int32_t>& labels, double scale,
                                          const std::vector<double>& class_weights,
                                          const backend::CrossEntropyParams& p) {
  SoftmaxCrossEntropy out{0.0, Vec(logits.size(), 0.0)};
  auto weight = [&](std::int64_t i) {
    if (labels[i] == p.ignore_label) return 0.0;
    return class_weights.empty() ? 1.0 : class_weights[labels[i]];
  };
  double total = 0;
  for (std::int64_t i = 0; i < rows; ++i) total += weight(i);
  if (total == 0) return out;
  const double e = p.label_smoothing;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (labels[i] == p.ignore_label) continue;
    const double* z = &logits[i * classes];
    double max = z[0];
    for (std::int64_t j = 1; j < classes; ++j) max = std::max(max, z[j]);
    double sum = 0;
    for (std::int64_t j = 0; j < classes; ++j) sum += std::exp(z[j] - max);
    const double w = weight(i) / total;
    for (std::int64_t j = 0; j < classes; ++j) {
      const double target = (j == labels[i] ? 1.0 - e : 0.0) + e / static_cast<double>(classes);
      const double log_q = z[j] - max - std::log(sum);
      out.loss -= w * target * log_q;
      out.dlogits[i * classes + j] = scale * w * (std::exp(log_q) - target);
    }
  }
  return out;
}

SoftmaxCrossEntropy soft_dice(const backend::SoftDiceParams& p, const Vec& logits,
                              const std::vector<std::int32_t>& labels, double scale) {
  const std::int64_t classes = p.classes, rows = p.samples * p.pixels;
  Vec q(logits.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < classes; ++j) sum += std::exp(logits[i * classes + j]);
    for (std::int64_t j = 0; j < classes; ++j)
      q[i * classes + j] = std::exp(logits[i * classes + j]) / sum;
  }
  const double counted = static_cast<double>(p.samples * (classes - p.first_class));
  SoftmaxCrossEntropy out{1.0, Vec(logits.size(), 0.0)};
  for (std::int64_t n = 0; n < p.samples; ++n)
    for (std::int64_t c = p.first_class; c < classes; ++c) {
      double inter = 0, pred = 0, truth = 0;
      for (std::int64_t i = n * p.pixels; i < (n + 1) * p.pixels; ++i) {
        const double g = labels[i] == c ? 1.0 : 0.0;
        inter += q[i * classes + c] * g, pred += q[i * classes + c], truth += g;
      }
      const double num = 2 * inter + p.smooth, den = pred + truth + p.smooth;
      out.loss -= num / den / counted;
      // d(num / den)/dq[i, c], then through the softmax to every logit of row i.
      for (std::int64_t i = n * p.pixels; i < (n + 1) * p.pixels; ++i) {
        const double g = labels[i] == c ? 1.0 : 0.0;
        const double dq = -(2 * g * den - num) / (den * den) / counted;
        for (std::int64_t j = 0; j < classes; ++j) {
          const double dq_dz = q[i * classes + c] * ((j == c ? 1.0 : 0.0) - q[i * classes + j]);
          out.dlogits[i * classes + j] += scale * dq * dq_dz;
        }
      }
    }
  return out;
}

SgdState sgd_momentum_update(const SgdParams& p, const Vec& weights, const Vec& grads,
                             const Vec& velocity) {
  SgdState s{weights, velocity};
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double g = p.grad_scale * grads[i] + p.weight_decay * weights[i];
    s.velocity[i] = p.momentum * velocity[i] + g;
    s.weights[i] = weights[i] - p.learning_rate * s.velocity[i];
  }
  return s;
}

Vec embedding_forward(std::int64_t dim, const Vec& table, const std::vector<std::int32_t>& ids) {
  Vec y(ids.size() * static_cast<std::size_t>(dim));
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t d = 0; d < dim; ++d) y[i * dim + d] = table[ids[i] * dim + d];
  return y;
}

Vec embedding_backward(std::int64_t vocab, std::int64_t dim, const Vec& dy,
                       const std::vector<std::int32_t>& ids) {
  Vec dtable(static_cast<std::size_t>(vocab * dim), 0.0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t d = 0; d < dim; ++d) dtable[ids[i] * dim + d] += dy[i * dim + d];
  return dtable;
}

Vec copy_columns(std::int64_t rows, std::int64_t src_width, const Vec& src, std::int64_t src_col,
                 std::int64_t dst_width, const Vec& dst, std::int64_t dst_col, std::int64_t cols,
                 bool accumulate) {
  Vec out = dst;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = src[r * src_width + src_col + j];
      double& o = out[r * dst_width + dst_col + j];
      o = accumulate ? o + v : v;
    }
  return out;
}

BinaryCrossEntropy sigmoid_binary_cross_entropy(const Vec& logits, const Vec& targets,
                                                double scale) {
  const double m = static_cast<double>(logits.size());
  BinaryCrossEntropy out{0.0, Vec(logits.size())};
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double p = 1.0 / (1.0 + std::exp(-logits[i])), t = targets[i];
    out.loss += (-t * std::log(p) - (1 - t) * std::log(1 - p)) / m;
    out.dlogits[i] = scale * (p - t) / m;
  }
  return out;
}

AdamState adam_update(const AdamParams& p, int t, const AdamState& state, const Vec& grads,
                      std::int64_t rows, const std::vector<std::int32_t>& touched,
                      double sum_squares) {
  AdamState s = state;
  double scale = p.grad_scale;
  if (p.max_grad_norm > 0) {
    const double clip = p.max_grad_norm / (scale * std::sqrt(sum_squares) + 1e-6);
    if (clip < 1) scale *= clip;
  }
  const std::size_t cols = grads.size() / static_cast<std::size_t>(rows);
  const double lr = p.learning_rate, beta1 = p.beta1, beta2 = p.beta2, wd = p.weight_decay;
  const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!touched.empty() && touched[i / cols] == 0) continue;
    double w = s.weights[i], g = scale * grads[i];
    if (p.decoupled)
      w -= lr * wd * w;  // torch.optim.AdamW
    else
      g += wd * w;  // torch.optim.Adam's weight_decay
    s.m[i] = beta1 * s.m[i] + (1 - beta1) * g;
    s.v[i] = beta2 * s.v[i] + (1 - beta2) * g * g;
    const double denom = std::sqrt(s.v[i]) / std::sqrt(bc2) + p.epsilon;
    s.weights[i] = w - lr / bc1 * s.m[i] / denom;
  }
  return s;
}

}  // namespace dlbench::ref
