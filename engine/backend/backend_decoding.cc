// The door checks of the decoding ops (Backend::greedy_pick): every operand's shape and dtype.
// The backends implement the *_impl hooks.
#include <string>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {

void Backend::greedy_pick(const GreedyParams& p, const Tensor& logits, const Tensor& tokens,
                          const Tensor& finished, const Tensor& lengths, const Tensor& unfinished) {
  const char* op = "greedy_pick";
  DLBENCH_CHECK(p.batch >= 1 && p.vocabulary >= 1,
                std::string(op) + ": batch and vocabulary must be >= 1");
  DLBENCH_CHECK(p.eos >= 0 && p.eos < p.vocabulary,
                std::string(op) + ": eos must be an id of the vocabulary");
  DLBENCH_CHECK(logits.defined(), std::string(op) + ": logits is not allocated");
  const DType d = logits.dtype();
  DLBENCH_CHECK(d == DType::kF32 || d == DType::kF16 || d == DType::kBF16,
                std::string(op) + ": logits must be of a float dtype, not " + to_string(d));
  check(logits, {p.batch, p.vocabulary}, d, op, "logits");
  check(tokens, {p.batch}, DType::kI32, op, "tokens");
  check(finished, {p.batch}, DType::kI32, op, "finished");
  check(lengths, {p.batch}, DType::kI32, op, "lengths");
  check(unfinished, {1}, DType::kI32, op, "unfinished");
  greedy_pick_impl(p, logits, tokens, finished, lengths, unfinished);
}

}  // namespace dlbench::backend
