// The float64 reference of Backend::attention_forward and _backward: each query's scores,
// softmax and weighted sum written straight from the math (no recomputation from saved
// statistics, no shared code with the backends but the parameters and the mask's formula).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/op_params.h"

namespace dlbench::ref {

using Vec = std::vector<double>;

struct AttentionForward {
  Vec o, stats;  // stats [batch, heads, seq_q]: the log-sum-exp of each query's scores
};
// Lengths: one per sample, or empty (every position).
AttentionForward attention_forward(const backend::AttentionParams& p, const Vec& q, const Vec& k,
                                   const Vec& v, const std::vector<std::int32_t>& q_lengths,
                                   const std::vector<std::int32_t>& kv_lengths);

struct AttentionGrads {
  Vec dq, dk, dv;
};
// By the chain rule through the softmax of each query row: dv = P^T dout, dP = dout v^T,
// dS = P (dP - rowsum(P dP)), dq = scale dS k, dk = scale dS^T q.
AttentionGrads attention_backward(const backend::AttentionParams& p, const Vec& q, const Vec& k,
                                  const Vec& v, const Vec& dout,
                                  const std::vector<std::int32_t>& q_lengths,
                                  const std::vector<std::int32_t>& kv_lengths);

}  // namespace dlbench::ref
