// GNMT's normalized Bahdanau attention in loops (Backend::additive_attention_forward and
// _backward), in double: a (sample, query) pair per OpenMP iteration, then a (sample, key) pair
// for the keys' and values' gradients. The CPU is the reference the CUDA kernels are held to.
// With u = g v / |v| and e = tanh(q_t + k_s) (a vector over the width):
//   forward:  score_ts = u . e,  p_t = softmax over the valid s,  o_t = sum_s p_ts values_s
//   backward: dp_ts = dout_t . values_s,  ds_ts = p_ts (dp_ts - sum_r p_tr dp_tr),
//             dq_t = u * sum_s ds_ts (1 - e^2),  dk_s = u * sum_t ds_ts (1 - e^2),
//             dvalues_s = sum_t p_ts dout_t,  du = sum_ts ds_ts e,
//             dv = (g / |v|) (du - v^ (v^ . du)),  dg = v^ . du,  v^ = v / |v|
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend/attention_mask.h"
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

// The score vector: u = g v^, and v^ = v / |v| with |v| for the gradients of v and g.
struct ScoreVector {
  std::vector<double> u, unit;
  double norm = 0, g = 0;
};

ScoreVector score_vector(const Tensor& v, const Tensor& g) {
  const float* pv = v.data_as<float>();
  ScoreVector s;
  const auto width = static_cast<std::size_t>(v.numel());
  for (std::size_t h = 0; h < width; ++h) s.norm += static_cast<double>(pv[h]) * pv[h];
  s.norm = std::sqrt(s.norm);
  s.g = g.data_as<float>()[0];
  s.u.resize(width), s.unit.resize(width);
  for (std::size_t h = 0; h < width; ++h) {
    s.unit[h] = pv[h] / s.norm;
    s.u[h] = s.g * s.unit[h];
  }
  return s;
}

// Writes or adds one gradient element.
void put(float* dst, double value, GradMode mode) {
  *dst = static_cast<float>(mode == GradMode::kAccumulate ? *dst + value : value);
}

void require_all_f32(const char* op,
                     std::initializer_list<std::pair<const Tensor*, const char*>> ts) {
  for (const auto& [t, what] : ts)
    if (t->defined()) require_f32(*t, op, what);
}

}  // namespace

void CpuBackend::additive_attention_forward_impl(const AdditiveAttentionParams& p, const Tensor& q,
                                                 const Tensor& k, const Tensor& values,
                                                 const Tensor& v, const Tensor& g,
                                                 const Tensor& lengths, const Tensor& o,
                                                 const Tensor& probs) {
  const char* op = "additive_attention_forward";
  require_all_f32(op, {{&q, "q"},
                       {&k, "k"},
                       {&values, "values"},
                       {&v, "v"},
                       {&g, "g"},
                       {&o, "o"},
                       {&probs, "probs"}});
  const std::int32_t* l = checked_lengths(lengths, p.keys, op, "lengths");
  const ScoreVector sv = score_vector(v, g);
  const std::int64_t B = p.batch, T = p.queries, S = p.keys, A = p.width, V = p.value_width;
  const float *pq = q.data_as<float>(), *pk = k.data_as<float>(), *pvals = values.data_as<float>();
  float *po = o.data_as<float>(), *pp = probs.data_as<float>();
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t length = clamp_length(l, b, S);
      const float* qt = pq + (t * B + b) * A;
      std::vector<double> prob(static_cast<std::size_t>(S), 0.0);
      double top = -INFINITY;
      for (std::int64_t s = 0; s < length; ++s) {
        const float* ks = pk + (s * B + b) * A;
        double score = 0;
        for (std::int64_t h = 0; h < A; ++h)
          score += sv.u[h] * std::tanh(static_cast<double>(qt[h]) + ks[h]);
        prob[s] = score;
        top = std::max(top, score);
      }
      double sum = 0;
      for (std::int64_t s = 0; s < length; ++s) sum += prob[s] = std::exp(prob[s] - top);
      for (std::int64_t s = 0; s < length; ++s) prob[s] /= sum;
      float* pt = pp + (b * T + t) * S;
      for (std::int64_t s = 0; s < S; ++s) pt[s] = static_cast<float>(prob[s]);
      float* ot = po + (t * B + b) * V;
      for (std::int64_t j = 0; j < V; ++j) {
        double acc = 0;
        for (std::int64_t s = 0; s < length; ++s) acc += prob[s] * pvals[(s * B + b) * V + j];
        ot[j] = static_cast<float>(acc);
      }
    }
}

void CpuBackend::additive_attention_backward_impl(const AdditiveAttentionParams& p, const Tensor& q,
                                                  const Tensor& k, const Tensor& values,
                                                  const Tensor& v, const Tensor& g,
                                                  const Tensor& lengths, const Tensor& probs,
                                                  const Tensor& dout,
                                                  const AdditiveAttentionGrads& grads) {
  const char* op = "additive_attention_backward";
  require_all_f32(op, {{&q, "q"},
                       {&k, "k"},
                       {&values, "values"},
                       {&v, "v"},
                       {&g, "g"},
                       {&probs, "probs"},
                       {&dout, "dout"},
                       {&grads.dq, "dq"},
                       {&grads.dk, "dk"},
                       {&grads.dvalues, "dvalues"},
                       {&grads.dv, "dv"},
                       {&grads.dg, "dg"}});
  const std::int32_t* l = checked_lengths(lengths, p.keys, op, "lengths");
  const ScoreVector sv = score_vector(v, g);
  const std::int64_t B = p.batch, T = p.queries, S = p.keys, A = p.width, V = p.value_width;
  const float *pq = q.data_as<float>(), *pk = k.data_as<float>(), *pvals = values.data_as<float>();
  const float *pp = probs.data_as<float>(), *pdo = dout.data_as<float>();
  const bool want_u = grads.dv.defined() || grads.dg.defined();
  // The scores' gradients [b, t, s], and each (sample, query)'s share of du, summed after in a
  // fixed order.
  std::vector<double> ds(static_cast<std::size_t>(B * T * S), 0.0);
  std::vector<double> du_parts(want_u ? static_cast<std::size_t>(B * T * A) : 0, 0.0);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t length = clamp_length(l, b, S);
      const float* dot = pdo + (t * B + b) * V;
      const float* pt = pp + (b * T + t) * S;
      double* dst = ds.data() + (b * T + t) * S;
      double weighted = 0;
      for (std::int64_t s = 0; s < length; ++s) {
        const float* vs = pvals + (s * B + b) * V;
        double dp = 0;
        for (std::int64_t j = 0; j < V; ++j) dp += static_cast<double>(dot[j]) * vs[j];
        dst[s] = dp;
        weighted += pt[s] * dp;
      }
      for (std::int64_t s = 0; s < length; ++s) dst[s] = pt[s] * (dst[s] - weighted);
      if (!grads.dq.defined() && !want_u) continue;
      const float* qt = pq + (t * B + b) * A;
      float* dqt = grads.dq.defined() ? grads.dq.data_as<float>() + (t * B + b) * A : nullptr;
      for (std::int64_t h = 0; h < A; ++h) {
        double slope = 0, along = 0;
        for (std::int64_t s = 0; s < length; ++s) {
          const double e = std::tanh(static_cast<double>(qt[h]) + pk[(s * B + b) * A + h]);
          slope += dst[s] * (1 - e * e);
          along += dst[s] * e;
        }
        if (dqt != nullptr) put(dqt + h, sv.u[h] * slope, grads.q_mode);
        if (want_u) du_parts[(b * T + t) * A + h] = along;
      }
    }
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t s = 0; s < S; ++s) {
      const bool valid = s < clamp_length(l, b, S);
      if (grads.dk.defined()) {
        const float* ks = pk + (s * B + b) * A;
        std::vector<double> slope(static_cast<std::size_t>(A), 0.0);
        for (std::int64_t t = 0; valid && t < T; ++t) {
          const double d = ds[(b * T + t) * S + s];
          const float* qt = pq + (t * B + b) * A;
          for (std::int64_t h = 0; h < A; ++h) {
            const double e = std::tanh(static_cast<double>(qt[h]) + ks[h]);
            slope[h] += d * (1 - e * e);
          }
        }
        float* dks = grads.dk.data_as<float>() + (s * B + b) * A;
        for (std::int64_t h = 0; h < A; ++h) put(dks + h, sv.u[h] * slope[h], grads.k_mode);
      }
      if (grads.dvalues.defined()) {
        std::vector<double> acc(static_cast<std::size_t>(V), 0.0);
        for (std::int64_t t = 0; valid && t < T; ++t) {
          const double weight = pp[(b * T + t) * S + s];
          const float* dot = pdo + (t * B + b) * V;
          for (std::int64_t j = 0; j < V; ++j) acc[j] += weight * dot[j];
        }
        float* dvs = grads.dvalues.data_as<float>() + (s * B + b) * V;
        for (std::int64_t j = 0; j < V; ++j) put(dvs + j, acc[j], grads.values_mode);
      }
    }
  if (!want_u) return;
  std::vector<double> du(static_cast<std::size_t>(A), 0.0);
  for (std::int64_t r = 0; r < B * T; ++r)
    for (std::int64_t h = 0; h < A; ++h) du[h] += du_parts[r * A + h];
  double along_v = 0;
  for (std::int64_t h = 0; h < A; ++h) along_v += sv.unit[h] * du[h];
  if (grads.dv.defined()) {
    float* dv = grads.dv.data_as<float>();
    for (std::int64_t h = 0; h < A; ++h)
      put(dv + h, sv.g / sv.norm * (du[h] - sv.unit[h] * along_v), grads.param_mode);
  }
  if (grads.dg.defined()) put(grads.dg.data_as<float>(), along_v, grads.param_mode);
}

}  // namespace dlbench::backend::cpu
