#include "tests/ops/harness/reference_attention.h"

#include <algorithm>
#include <cmath>

namespace dlbench::ref {
namespace {

using backend::AttentionParams;

// A query: its sample, head and position.
struct QueryRow {
  std::int64_t n, h, i;
};

std::int64_t at(const AttentionParams& p, std::int64_t n, std::int64_t seq, std::int64_t pos,
                std::int64_t h, std::int64_t c) {
  return ((n * seq + pos) * p.heads + h) * p.head_dim + c;
}

std::int64_t keys_of(const AttentionParams& p, const QueryRow& r,
                     const std::vector<std::int32_t>& q_lengths,
                     const std::vector<std::int32_t>& kv_lengths) {
  // Written out here rather than taken from attention_mask.h, so the rule is checked too: a
  // causal mask aligned at the top left (query i sees keys 0..i), whatever seq_kv is.
  const std::int64_t q_len = q_lengths.empty() ? p.seq_q : q_lengths[r.n];
  const std::int64_t kv_len = kv_lengths.empty() ? p.seq_kv : kv_lengths[r.n];
  if (r.i >= q_len) return 0;
  return p.causal ? std::min(r.i + 1, kv_len) : kv_len;
}

Vec probabilities(const AttentionParams& p, const Vec& q, const Vec& k, const QueryRow& r,
                  std::int64_t keys, double* log_sum_exp) {
  Vec s(static_cast<std::size_t>(keys));
  for (std::int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (std::int64_t c = 0; c < p.head_dim; ++c)
      dot += q[at(p, r.n, p.seq_q, r.i, r.h, c)] * k[at(p, r.n, p.seq_kv, j, r.h, c)];
    s[j] = p.scale * dot;
  }
  double m = -INFINITY, sum = 0;
  for (double x : s) m = std::max(m, x);
  for (double x : s) sum += std::exp(x - m);
  for (double& x : s) x = std::exp(x - m) / sum;
  if (log_sum_exp) *log_sum_exp = keys > 0 ? m + std::log(sum) : 0.0;
  return s;
}

}  // namespace

AttentionForward attention_forward(const AttentionParams& p, const Vec& q, const Vec& k,
                                   const Vec& v, const std::vector<std::int32_t>& q_lengths,
                                   const std::vector<std::int32_t>& kv_lengths) {
  AttentionForward out{Vec(q.size(), 0.0),
                       Vec(static_cast<std::size_t>(p.batch * p.heads * p.seq_q))};
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const QueryRow r{n, h, i};
        const std::int64_t keys = keys_of(p, r, q_lengths, kv_lengths);
        double lse = 0;
        const Vec prob = probabilities(p, q, k, r, keys, &lse);
        out.stats[(n * p.heads + h) * p.seq_q + i] = lse;
        for (std::int64_t j = 0; j < keys; ++j)
          for (std::int64_t c = 0; c < p.head_dim; ++c)
            out.o[at(p, n, p.seq_q, i, h, c)] += prob[j] * v[at(p, n, p.seq_kv, j, h, c)];
      }
  return out;
}

AttentionGrads attention_backward(const AttentionParams& p, const Vec& q, const Vec& k,
                                  const Vec& v, const Vec& dout,
                                  const std::vector<std::int32_t>& q_lengths,
                                  const std::vector<std::int32_t>& kv_lengths) {
  AttentionGrads g{Vec(q.size(), 0.0), Vec(k.size(), 0.0), Vec(v.size(), 0.0)};
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const QueryRow r{n, h, i};
        const std::int64_t keys = keys_of(p, r, q_lengths, kv_lengths);
        const Vec prob = probabilities(p, q, k, r, keys, nullptr);
        Vec dp(static_cast<std::size_t>(keys), 0.0);
        for (std::int64_t j = 0; j < keys; ++j)
          for (std::int64_t c = 0; c < p.head_dim; ++c) {
            const double d = dout[at(p, n, p.seq_q, i, h, c)];
            dp[j] += d * v[at(p, n, p.seq_kv, j, h, c)];
            g.dv[at(p, n, p.seq_kv, j, h, c)] += prob[j] * d;
          }
        double row = 0;
        for (std::int64_t j = 0; j < keys; ++j) row += prob[j] * dp[j];
        for (std::int64_t j = 0; j < keys; ++j) {
          const double ds = p.scale * prob[j] * (dp[j] - row);
          for (std::int64_t c = 0; c < p.head_dim; ++c) {
            g.dq[at(p, n, p.seq_q, i, h, c)] += ds * k[at(p, n, p.seq_kv, j, h, c)];
            g.dk[at(p, n, p.seq_kv, j, h, c)] += ds * q[at(p, n, p.seq_q, i, h, c)];
          }
        }
      }
  return g;
}

}  // namespace dlbench::ref
