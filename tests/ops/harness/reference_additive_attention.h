// The float64 reference of Backend::additive_attention_forward and _backward (GNMT's normalized
// Bahdanau attention), written from the math with every tanh term held in a table: the score
// vector's normalization differentiated by its Jacobian, the softmax by its own, no recomputation
// and no shared code with the backends but the parameters and the rows' layout.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/op_params.h"

namespace dlbench::ref {

using Vec = std::vector<double>;

struct AdditiveForward {
  Vec o, probs;  // probs [batch, queries, keys], 0 past each sample's length
};
// g holds one value; lengths one per sample.
AdditiveForward additive_attention_forward(const backend::AdditiveAttentionParams& p, const Vec& q,
                                           const Vec& k, const Vec& values, const Vec& v,
                                           const Vec& g, const std::vector<std::int32_t>& lengths);

struct AdditiveGrads {
  Vec dq, dk, dvalues, dv, dg;
};
AdditiveGrads additive_attention_backward(const backend::AdditiveAttentionParams& p, const Vec& q,
                                          const Vec& k, const Vec& values, const Vec& v,
                                          const Vec& g, const std::vector<std::int32_t>& lengths,
                                          const Vec& dout);

}  // namespace dlbench::ref
