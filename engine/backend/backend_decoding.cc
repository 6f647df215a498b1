// The door checks of the decoding ops (Backend::greedy_pick and beam_pick): every operand's shape
// and dtype.
// The backends implement the *_impl hooks.
#include <string>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {
namespace {

// logits [rows, vocabulary] of a float dtype.
void check_logits(const Tensor& logits, std::int64_t rows, std::int64_t vocabulary,
                  const char* op) {
  DLBENCH_CHECK(logits.defined(), std::string(op) + ": logits is not allocated");
  const DType d = logits.dtype();
  DLBENCH_CHECK(d == DType::kF32 || d == DType::kF16 || d == DType::kBF16,
                std::string(op) + ": logits must be of a float dtype, not " + to_string(d));
  check(logits, {rows, vocabulary}, d, op, "logits");
}

}  // namespace

void Backend::greedy_pick(const GreedyParams& p, const Tensor& logits, const Tensor& tokens,
                          const Tensor& finished, const Tensor& lengths, const Tensor& unfinished) {
  const char* op = "greedy_pick";
  DLBENCH_CHECK(p.batch >= 1 && p.vocabulary >= 1,
                std::string(op) + ": batch and vocabulary must be >= 1");
  DLBENCH_CHECK(p.eos >= 0 && p.eos < p.vocabulary,
                std::string(op) + ": eos must be an id of the vocabulary");
  check_logits(logits, p.batch, p.vocabulary, op);
  check(tokens, {p.batch}, DType::kI32, op, "tokens");
  check(finished, {p.batch}, DType::kI32, op, "finished");
  check(lengths, {p.batch}, DType::kI32, op, "lengths");
  check(unfinished, {1}, DType::kI32, op, "unfinished");
  greedy_pick_impl(p, logits, tokens, finished, lengths, unfinished);
}

void Backend::beam_pick(const BeamParams& p, const Tensor& logits, const Tensor& attention,
                        const BeamState& state, const Tensor& tokens, const Tensor& parents,
                        const Tensor& unfinished) {
  const char* op = "beam_pick";
  DLBENCH_CHECK(p.batch >= 1 && p.sources >= 1,
                std::string(op) + ": batch and sources must be >= 1");
  DLBENCH_CHECK(p.beam >= 1 && p.beam <= BeamParams::kMaxBeam,
                std::string(op) + ": beam must be in [1, " + std::to_string(BeamParams::kMaxBeam) +
                    "], not " + std::to_string(p.beam));
  DLBENCH_CHECK(p.vocabulary >= p.beam,
                std::string(op) + ": the vocabulary must hold at least beam ids");
  DLBENCH_CHECK(p.eos >= 0 && p.eos < p.vocabulary,
                std::string(op) + ": eos must be an id of the vocabulary");
  const std::int64_t rows = p.rows();
  check_logits(logits, rows, p.vocabulary, op);
  check(attention, {rows, p.sources}, kF32, op, "attention");
  check(state.coverage, {rows, p.sources}, kF32, op, "coverage");
  check(state.scores, {rows}, kF32, op, "scores");
  check(state.finished, {rows}, DType::kI32, op, "finished");
  check(state.lengths, {rows}, DType::kI32, op, "lengths");
  check(tokens, {rows}, DType::kI32, op, "tokens");
  check(parents, {rows}, DType::kI32, op, "parents");
  check(unfinished, {1}, DType::kI32, op, "unfinished");
  beam_pick_impl(p, logits, attention, state, tokens, parents, unfinished);
}

}  // namespace dlbench::backend
