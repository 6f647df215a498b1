#include "tests/ops/harness/reference_additive_attention.h"

#include <algorithm>
#include <cmath>

namespace dlbench::ref {
namespace {

using backend::AdditiveAttentionParams;
using Index = std::size_t;

// Everything forward computes: the normalized vector u = g v / |v|, the table of tanh terms
// e[b][t][s][h] (valid keys only) and the probabilities.
struct Trace {
  double norm = 0;
  Vec u, tanh_terms, probs, o;
};

Index at(std::int64_t a, std::int64_t b) {
  return static_cast<Index>(a * b);
}

Trace run(const AdditiveAttentionParams& p, const Vec& q, const Vec& k, const Vec& values,
          const Vec& v, const Vec& g, const std::vector<std::int32_t>& lengths) {
  const std::int64_t B = p.batch, T = p.queries, S = p.keys, A = p.width, V = p.value_width;
  Trace r;
  for (double x : v) r.norm += x * x;
  r.norm = std::sqrt(r.norm);
  for (double x : v) r.u.push_back(g[0] * x / r.norm);
  r.tanh_terms.assign(at(B * T * S, A), 0.0);
  r.probs.assign(at(B * T, S), 0.0);
  r.o.assign(at(T * B, V), 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t length = lengths[static_cast<Index>(b)];
      Vec score(static_cast<Index>(length));
      for (std::int64_t s = 0; s < length; ++s)
        for (std::int64_t h = 0; h < A; ++h) {
          const double e = std::tanh(q[at(t * B + b, A) + h] + k[at(s * B + b, A) + h]);
          r.tanh_terms[at((b * T + t) * S + s, A) + h] = e;
          score[s] += r.u[h] * e;
        }
      double top = -INFINITY, sum = 0;
      for (double x : score) top = std::max(top, x);
      for (double x : score) sum += std::exp(x - top);
      for (std::int64_t s = 0; s < length; ++s) {
        const double prob = std::exp(score[s] - top) / sum;
        r.probs[at(b * T + t, S) + s] = prob;
        for (std::int64_t j = 0; j < V; ++j)
          r.o[at(t * B + b, V) + j] += prob * values[at(s * B + b, V) + j];
      }
    }
  return r;
}

}  // namespace

AdditiveForward additive_attention_forward(const AdditiveAttentionParams& p, const Vec& q,
                                           const Vec& k, const Vec& values, const Vec& v,
                                           const Vec& g, const std::vector<std::int32_t>& lengths) {
  Trace r = run(p, q, k, values, v, g, lengths);
  return {std::move(r.o), std::move(r.probs)};
}

AdditiveGrads additive_attention_backward(const AdditiveAttentionParams& p, const Vec& q,
                                          const Vec& k, const Vec& values, const Vec& v,
                                          const Vec& g, const std::vector<std::int32_t>& lengths,
                                          const Vec& dout) {
  const std::int64_t B = p.batch, T = p.queries, S = p.keys, A = p.width, V = p.value_width;
  const Trace r = run(p, q, k, values, v, g, lengths);
  AdditiveGrads d{Vec(q.size(), 0.0), Vec(k.size(), 0.0), Vec(values.size(), 0.0),
                  Vec(v.size(), 0.0), Vec(1, 0.0)};
  Vec du(static_cast<Index>(A), 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t length = lengths[static_cast<Index>(b)];
      const double* prob = r.probs.data() + at(b * T + t, S);
      const double* dot = dout.data() + at(t * B + b, V);
      // o_t = sum_s p_s values_s: dvalues_s += p_s dout_t and dp_s = dout_t . values_s.
      Vec dp(static_cast<Index>(length), 0.0);
      for (std::int64_t s = 0; s < length; ++s)
        for (std::int64_t j = 0; j < V; ++j) {
          dp[s] += dot[j] * values[at(s * B + b, V) + j];
          d.dvalues[at(s * B + b, V) + j] += prob[s] * dot[j];
        }
      // The softmax's Jacobian: dscore_s = sum_r p_r (delta_rs - p_s) dp_r.
      for (std::int64_t s = 0; s < length; ++s) {
        double dscore = 0;
        for (std::int64_t r_ = 0; r_ < length; ++r_)
          dscore += prob[r_] * ((r_ == s ? 1.0 : 0.0) - prob[s]) * dp[r_];
        // score = sum_h u_h e_h with e = tanh(q_t + k_s): de/dq = de/dk = 1 - e^2.
        for (std::int64_t h = 0; h < A; ++h) {
          const double e = r.tanh_terms[at((b * T + t) * S + s, A) + h];
          const double pre = dscore * r.u[h] * (1 - e * e);
          d.dq[at(t * B + b, A) + h] += pre;
          d.dk[at(s * B + b, A) + h] += pre;
          du[h] += dscore * e;
        }
      }
    }
  // u_h = g v_h / |v|: du_h/dv_i = g (delta_hi / |v| - v_h v_i / |v|^3), du_h/dg = v_h / |v|.
  for (std::int64_t i = 0; i < A; ++i)
    for (std::int64_t h = 0; h < A; ++h)
      d.dv[i] +=
          du[h] * g[0] * ((h == i ? 1.0 : 0.0) / r.norm - v[h] * v[i] / (r.norm * r.norm * r.norm));
  for (std::int64_t h = 0; h < A; ++h) d.dg[0] += du[h] * v[h] / r.norm;
  return d;
}

}  // namespace dlbench::ref
