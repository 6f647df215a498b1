// BERT's pretraining batches, synthetic: what Google's create_pretraining_data.py makes of a
// corpus, drawn instead of read. Each sequence is [CLS] A [SEP] B [SEP] then padding; 90 % fill
// the whole length, the others stop at a length drawn uniformly (the script's short_seq_prob is
// 10 %, and NVIDIA's phase-1 data is mostly full). Words are Zipf-distributed ids (exponent 1, as
// word frequencies are). 15 % of the word positions (at least one, at most max_predictions) are
// predicted: their label is the original id (-100 elsewhere: the loss's ignored label), and
// their input becomes [MASK] 80 % of the time, a random word 10 %, itself 10 %. Segment ids
// are 0 up to the first [SEP] and 1 after it (0 on padding), positions count from 0 in every row,
// and each sample has a next-sentence label (0: B follows A, 1: B is random), drawn evenly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/op_params.h"

namespace dlbench::data {

// Special ids, as bert-base-uncased's vocabulary places them; words come from [first_word,
// vocabulary).
struct TokenIds {
  std::int32_t pad = 0, cls = 101, sep = 102, mask = 103;
  std::int32_t first_word = 999;
};

struct PretrainingShape {
  std::int64_t batch = 1;
  std::int64_t sequence = 128;
  std::int64_t vocabulary = 30522;
  std::int64_t max_predictions = 20;  // 20 at sequence 128, 80 at 512 (NVIDIA's phases)
  TokenIds special = {};
};

// Which of a batch's tensors an input holds.
enum class PretrainingField { kIds, kSegments, kPositions, kMaskedLabels, kLengths, kNextSentence };
// Its name as a model's input and in a peer's --inputs: "ids", "masked_labels", ...
const char* to_string(PretrainingField field);

struct PretrainingBatch {
  // [batch * sequence], row-major by sample.
  std::vector<std::int32_t> ids, segments, positions, masked_labels;
  // [batch].
  std::vector<std::int32_t> lengths, next_sentence;
  const std::vector<std::int32_t>& field(PretrainingField f) const;
};

// The label the loss leaves out (softmax cross-entropy's default ignore_label).
inline constexpr std::int32_t kIgnoredLabel = backend::CrossEntropyParams{}.ignore_label;

inline constexpr std::int64_t kShortestSequence = 5;  // [CLS] w [SEP] w [SEP]

// An internal error when the shape cannot hold a sequence or the vocabulary has no words (the
// model sizes them).
void check_pretraining_shape(const PretrainingShape& shape);
// A batch of padding rows (lengths 0) for write_pretraining_row to fill.
PretrainingBatch empty_pretraining_batch(const PretrainingShape& shape);
// Row n becomes [CLS] a [SEP] b [SEP] then padding, with its segment ids, its length, the
// next-sentence label (1: b is random) and the masking above, drawn from `state`. a and b hold
// a word each at least and fit the sequence together with the three special tokens.
void write_pretraining_row(const PretrainingShape& shape, std::int64_t n,
                           std::span<const std::int32_t> a, std::span<const std::int32_t> b,
                           bool random_next, std::uint64_t& state, PretrainingBatch& batch);

// Deterministic per seed on every machine; the shape is checked as check_pretraining_shape does.
PretrainingBatch pretraining_batch(const PretrainingShape& shape, std::uint64_t seed);

}  // namespace dlbench::data
