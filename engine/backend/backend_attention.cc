// The door checks of the attention ops (Backend::attention_forward and _backward): every
// operand's shape and dtype, the parameters' ranges. The backends implement the *_impl hooks.
#include <cmath>
#include <string>

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

}  // namespace

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
