// The door checks of the attention ops (Backend::attention_forward and _backward, and the
// additive attention's pair): every operand's shape and dtype, the parameters' ranges. The
// backends implement the *_impl hooks.
#include <cmath>
#include <string>
#include <tuple>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {
namespace {

// The parameters, and q, k and v: [batch * seq, heads * head_dim] of one float dtype, the
// lengths i32 [batch] where given, stats f32 [batch, heads, seq_q].
void check_attention(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& q_lengths, const Tensor& kv_lengths, const Tensor& stats,
                     const char* op) {
  DLBENCH_CHECK(p.batch >= 1 && p.heads >= 1 && p.seq_q >= 1 && p.seq_kv >= 1 && p.head_dim >= 1,
                std::string(op) + ": batch, heads, sequence lengths and head_dim must be >= 1");
  DLBENCH_CHECK(std::isfinite(p.scale), std::string(op) + ": scale must be a finite number");
  DLBENCH_CHECK(q.defined(), std::string(op) + ": q is not allocated");
  check(q, {p.batch * p.seq_q, p.width()}, q.dtype(), op, "q");
  check(k, {p.batch * p.seq_kv, p.width()}, q.dtype(), op, "k");
  check(v, {p.batch * p.seq_kv, p.width()}, q.dtype(), op, "v");
  if (q_lengths.defined()) check(q_lengths, {p.batch}, DType::kI32, op, "q_lengths");
  if (kv_lengths.defined()) check(kv_lengths, {p.batch}, DType::kI32, op, "kv_lengths");
  check(stats, {p.batch, p.heads, p.seq_q}, kF32, op, "stats");
}

// The additive attention's parameters and the operands both directions read: q, k, values and v
// of q's float dtype, g f32 [1], lengths i32 [batch], probs f32 [batch, queries, keys].
void check_additive(const AdditiveAttentionParams& p, const Tensor& q, const Tensor& k,
                    const Tensor& values, const Tensor& v, const Tensor& g, const Tensor& lengths,
                    const Tensor& probs, const char* op) {
  DLBENCH_CHECK(p.batch >= 1 && p.queries >= 1 && p.keys >= 1 && p.width >= 1 && p.value_width >= 1,
                std::string(op) + ": batch, queries, keys, width and value_width must be >= 1");
  DLBENCH_CHECK(q.defined(), std::string(op) + ": q is not allocated");
  DLBENCH_CHECK(q.dtype() == DType::kF32 || q.dtype() == DType::kF16 || q.dtype() == DType::kBF16,
                std::string(op) + ": q must be f32, f16 or bf16, not " + to_string(q.dtype()));
  check(q, p.query_shape(), q.dtype(), op, "q");
  check(k, p.key_shape(), q.dtype(), op, "k");
  check(values, p.value_shape(), q.dtype(), op, "values");
  check(v, {p.width}, q.dtype(), op, "v");
  check(g, {1}, kF32, op, "g");
  check(lengths, {p.batch}, DType::kI32, op, "lengths");
  check(probs, p.probs_shape(), kF32, op, "probs");
}

}  // namespace

void Backend::additive_attention_forward(const AdditiveAttentionParams& p, const Tensor& q,
                                         const Tensor& k, const Tensor& values, const Tensor& v,
                                         const Tensor& g, const Tensor& lengths, const Tensor& o,
                                         const Tensor& probs) {
  const char* op = "additive_attention_forward";
  check_additive(p, q, k, values, v, g, lengths, probs, op);
  check(o, p.output_shape(), q.dtype(), op, "o");
  additive_attention_forward_impl(p, q, k, values, v, g, lengths, o, probs);
}

void Backend::additive_attention_backward(const AdditiveAttentionParams& p, const Tensor& q,
                                          const Tensor& k, const Tensor& values, const Tensor& v,
                                          const Tensor& g, const Tensor& lengths,
                                          const Tensor& probs, const Tensor& dout,
                                          const AdditiveAttentionGrads& grads) {
  const char* op = "additive_attention_backward";
  check_additive(p, q, k, values, v, g, lengths, probs, op);
  check(dout, p.output_shape(), q.dtype(), op, "dout");
  for (const auto& [t, like, what] : {std::tuple{&grads.dq, &q, "dq"},
                                      {&grads.dk, &k, "dk"},
                                      {&grads.dvalues, &values, "dvalues"},
                                      {&grads.dv, &v, "dv"},
                                      {&grads.dg, &g, "dg"}})
    if (t->defined()) check_same(*like, *t, op, what);
  additive_attention_backward_impl(p, q, k, values, v, g, lengths, probs, dout, grads);
}

const char* to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kAuto:
      return "auto";
    case AttentionKernel::kUnfused:
      return "unfused";
    case AttentionKernel::kFlash:
      return "flash";
    case AttentionKernel::kCudnn:
      return "cudnn";
  }
  return "unknown";
}

void Backend::attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                const Tensor& v, const Tensor& q_lengths, const Tensor& kv_lengths,
                                const Tensor& o, const Tensor& stats) {
  const char* op = "attention_forward";
  check_attention(p, q, k, v, q_lengths, kv_lengths, stats, op);
  check_same(q, o, op, "o");
  attention_forward_impl(p, q, k, v, q_lengths, kv_lengths, o, stats);
}

void Backend::attention_backward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                 const Tensor& v, const Tensor& o, const Tensor& dout,
                                 const Tensor& stats, const Tensor& q_lengths,
                                 const Tensor& kv_lengths, const Tensor& dq, const Tensor& dk,
                                 const Tensor& dv, GradMode mode) {
  const char* op = "attention_backward";
  check_attention(p, q, k, v, q_lengths, kv_lengths, stats, op);
  check_same(q, o, op, "o");
  check_same(q, dout, op, "dout");
  check_same(q, dq, op, "dq");
  check_same(k, dk, op, "dk");
  check_same(v, dv, op, "dv");
  attention_backward_impl(p, q, k, v, o, dout, stats, q_lengths, kv_lengths, dq, dk, dv, mode);
}

}  // namespace dlbench::backend
