// Scaled dot-product attention in loops: a (sample, head) pair per OpenMP iteration, each
// query's scores, softmax and weighted sum in double. The CPU is the reference the CUDA paths
// (the unfused products, and fused attention) are held to; oneDNN's matmul would be faster for
// CPU training runs, and is left for when a CPU benchmark of the attention models asks for it.
//
//   forward:  s_j = scale q_i . k_j over the visible keys, m = max s, l = log sum exp(s - m),
//             stats_i = m + l, o_i = sum_j exp(s_j - stats_i) v_j
//   backward: P_ij = exp(s_ij - stats_i) (recomputed), dP_ij = dout_i . v_j,
//             D_i = sum_j P_ij dP_ij, dS_ij = scale P_ij (dP_ij - D_i),
//             dq_i = sum_j dS_ij k_j, dk_j = sum_i dS_ij q_i, dv_j = sum_i P_ij dout_i
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/attention_mask.h"
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

const std::int32_t* checked_lengths(const Tensor& lengths, std::int64_t seq, const char* op,
                                    const char* what) {
  if (!lengths.defined()) return nullptr;
  require_cpu(lengths, op, what);
  const auto* l = lengths.data_as<std::int32_t>();
  for (std::int64_t n = 0; n < lengths.dim(0); ++n)
    if (l[n] < 0 || l[n] > seq)
      throw Error(ErrorKind::kUsage,
                  std::string(op) + ": " + what + "[" + std::to_string(n) + "] = " +
                      std::to_string(l[n]) + " is outside [0, " + std::to_string(seq) + "]",
                  "sequence lengths count positions of the padded sequence");
  return l;
}

namespace {

// Where head h of row r starts in a [rows, heads * head_dim] tensor.
struct Rows {
  const AttentionParams& p;
  std::int64_t offset(std::int64_t n, std::int64_t seq, std::int64_t pos, std::int64_t h) const {
    return ((n * seq + pos) * p.heads + h) * p.head_dim;
  }
};

double dot(const float* a, const float* b, std::int64_t d) {
  double sum = 0;
  for (std::int64_t c = 0; c < d; ++c) sum += static_cast<double>(a[c]) * b[c];
  return sum;
}

// The scaled scores of query i (at qi) against the first `keys` keys of sample n, head h.
void scores(const AttentionParams& p, const float* qi, const float* k, std::int64_t n,
            std::int64_t h, std::int64_t keys, std::vector<double>& s) {
  const Rows rows{p};
  for (std::int64_t j = 0; j < keys; ++j)
    s[j] = p.scale * dot(qi, k + rows.offset(n, p.seq_kv, j, h), p.head_dim);
}

}  // namespace

void CpuBackend::attention_forward_impl(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                        const Tensor& v, const Tensor& q_lengths,
                                        const Tensor& kv_lengths, const Tensor& o,
                                        const Tensor& stats) {
  const char* op = "attention_forward";
  require_f32(q, op, "q"), require_f32(k, op, "k"), require_f32(v, op, "v");
  require_f32(o, op, "o");
  const std::int32_t* ql = checked_lengths(q_lengths, p.seq_q, op, "q_lengths");
  const std::int32_t* kl = checked_lengths(kv_lengths, p.seq_kv, op, "kv_lengths");
  const float *pq = q.data_as<float>(), *pk = k.data_as<float>(), *pv = v.data_as<float>();
  float* po = o.data_as<float>();
  float* pstats = stats.data_as<float>();
  const Rows rows{p};
  const std::int64_t d = p.head_dim;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const std::int64_t q_len = clamp_length(ql, n, p.seq_q);
      const std::int64_t kv_len = clamp_length(kl, n, p.seq_kv);
      std::vector<double> s(static_cast<std::size_t>(p.seq_kv)), out(static_cast<std::size_t>(d));
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        float* oi = po + rows.offset(n, p.seq_q, i, h);
        float& stat = pstats[(n * p.heads + h) * p.seq_q + i];
        const std::int64_t keys = visible_keys(i, q_len, kv_len, p.causal);
        if (keys == 0) {
          std::fill(oi, oi + d, 0.0f);
          stat = 0.0f;
          continue;
        }
        scores(p, pq + rows.offset(n, p.seq_q, i, h), pk, n, h, keys, s);
        const double m = *std::max_element(s.begin(), s.begin() + keys);
        double sum = 0;
        for (std::int64_t j = 0; j < keys; ++j) sum += std::exp(s[j] - m);
        const double lse = m + std::log(sum);
        std::fill(out.begin(), out.end(), 0.0);
        for (std::int64_t j = 0; j < keys; ++j) {
          const double weight = std::exp(s[j] - lse);
          const float* vj = pv + rows.offset(n, p.seq_kv, j, h);
          for (std::int64_t c = 0; c < d; ++c) out[c] += weight * vj[c];
        }
        for (std::int64_t c = 0; c < d; ++c) oi[c] = static_cast<float>(out[c]);
        stat = static_cast<float>(lse);
      }
    }
}

void CpuBackend::attention_backward_impl(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                         const Tensor& v, const Tensor& o, const Tensor& dout,
                                         const Tensor& stats, const Tensor& q_lengths,
                                         const Tensor& kv_lengths, const Tensor& dq,
                                         const Tensor& dk, const Tensor& dv, GradMode mode) {
  const char* op = "attention_backward";
  require_f32(q, op, "q"), require_f32(k, op, "k"), require_f32(v, op, "v");
  require_f32(o, op, "o"), require_f32(dout, op, "dout");
  require_f32(dq, op, "dq"), require_f32(dk, op, "dk"), require_f32(dv, op, "dv");
  const std::int32_t* ql = checked_lengths(q_lengths, p.seq_q, op, "q_lengths");
  const std::int32_t* kl = checked_lengths(kv_lengths, p.seq_kv, op, "kv_lengths");
  const float *pq = q.data_as<float>(), *pk = k.data_as<float>(), *pv = v.data_as<float>();
  const float* pdo = dout.data_as<float>();
  const float* pstats = stats.data_as<float>();
  float *pdq = dq.data_as<float>(), *pdk = dk.data_as<float>(), *pdv = dv.data_as<float>();
  const bool accumulate = mode == GradMode::kAccumulate;
  const Rows rows{p};
  const std::int64_t d = p.head_dim;
  auto write = [accumulate](float* dst, const double* src, std::int64_t count) {
    for (std::int64_t c = 0; c < count; ++c)
      dst[c] = static_cast<float>(accumulate ? dst[c] + src[c] : src[c]);
  };
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t h = 0; h < p.heads; ++h) {
      const std::int64_t q_len = clamp_length(ql, n, p.seq_q);
      const std::int64_t kv_len = clamp_length(kl, n, p.seq_kv);
      const auto kv_size = static_cast<std::size_t>(p.seq_kv);
      std::vector<double> s(kv_size), prob(kv_size), ds(kv_size), dqi(static_cast<std::size_t>(d));
      std::vector<double> dk_acc(kv_size * d, 0.0), dv_acc(kv_size * d, 0.0);
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const float* qi = pq + rows.offset(n, p.seq_q, i, h);
        const float* doi = pdo + rows.offset(n, p.seq_q, i, h);
        const std::int64_t keys = visible_keys(i, q_len, kv_len, p.causal);
        std::fill(dqi.begin(), dqi.end(), 0.0);
        if (keys > 0) {
          scores(p, qi, pk, n, h, keys, s);
          const double lse = pstats[(n * p.heads + h) * p.seq_q + i];
          double dsum = 0;
          for (std::int64_t j = 0; j < keys; ++j) {
            prob[j] = std::exp(s[j] - lse);
            ds[j] = dot(doi, pv + rows.offset(n, p.seq_kv, j, h), d);  // dP
            dsum += prob[j] * ds[j];
          }
          for (std::int64_t j = 0; j < keys; ++j) {
            ds[j] = p.scale * prob[j] * (ds[j] - dsum);
            const float* kj = pk + rows.offset(n, p.seq_kv, j, h);
            for (std::int64_t c = 0; c < d; ++c) {
              dqi[c] += ds[j] * kj[c];
              dk_acc[j * d + c] += ds[j] * qi[c];
              dv_acc[j * d + c] += prob[j] * doi[c];
            }
          }
        }
        write(pdq + rows.offset(n, p.seq_q, i, h), dqi.data(), d);
      }
      for (std::int64_t j = 0; j < p.seq_kv; ++j) {
        write(pdk + rows.offset(n, p.seq_kv, j, h), dk_acc.data() + j * d, d);
        write(pdv + rows.offset(n, p.seq_kv, j, h), dv_acc.data() + j * d, d);
      }
    }
}

}  // namespace dlbench::backend::cpu
