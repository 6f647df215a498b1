#include "engine/data/pretraining_batch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/input_spec.h"
#include "engine/data/synthetic.h"

namespace dlbench::data {
namespace {

constexpr double kFullShare = 0.9;
constexpr double kMaskedShare = 0.15;

}  // namespace

const std::vector<std::int32_t>& PretrainingBatch::field(PretrainingField f) const {
  switch (f) {
    case PretrainingField::kIds:
      return ids;
    case PretrainingField::kSegments:
      return segments;
    case PretrainingField::kPositions:
      return positions;
    case PretrainingField::kMaskedLabels:
      return masked_labels;
    case PretrainingField::kLengths:
      return lengths;
    case PretrainingField::kNextSentence:
      return next_sentence;
  }
  return ids;
}

const char* to_string(PretrainingField f) {
  switch (f) {
    case PretrainingField::kIds:
      return "ids";
    case PretrainingField::kSegments:
      return "segments";
    case PretrainingField::kPositions:
      return "positions";
    case PretrainingField::kMaskedLabels:
      return "masked_labels";
    case PretrainingField::kLengths:
      return "lengths";
    case PretrainingField::kNextSentence:
      return "next_sentence";
  }
  return "unknown";
}

void check_pretraining_shape(const PretrainingShape& s) {
  DLBENCH_CHECK(s.batch >= 1 && s.sequence >= kShortestSequence,
                "pretraining data: sequences need at least " + std::to_string(kShortestSequence) +
                    " positions ([CLS] A [SEP] B [SEP])");
  DLBENCH_CHECK(s.vocabulary > s.special.first_word && s.max_predictions >= 1,
                "pretraining data: the vocabulary has no word ids past the special ones");
}

PretrainingBatch empty_pretraining_batch(const PretrainingShape& s) {
  check_pretraining_shape(s);
  const auto cells = static_cast<std::size_t>(s.batch * s.sequence);
  PretrainingBatch b;
  b.ids.assign(cells, s.special.pad);
  b.segments.assign(cells, 0);
  b.masked_labels.assign(cells, kIgnoredLabel);
  b.positions.resize(cells);
  for (std::size_t i = 0; i < cells; ++i)
    b.positions[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) % s.sequence);
  b.lengths.assign(static_cast<std::size_t>(s.batch), 0);
  b.next_sentence.assign(static_cast<std::size_t>(s.batch), 0);
  return b;
}

void write_pretraining_row(const PretrainingShape& s, std::int64_t n,
                           std::span<const std::int32_t> a, std::span<const std::int32_t> b,
                           bool random_next, std::uint64_t& state, PretrainingBatch& batch) {
  const TokenIds& t = s.special;
  const auto length = static_cast<std::int64_t>(a.size() + b.size()) + 3;
  DLBENCH_CHECK(!a.empty() && !b.empty() && length <= s.sequence && n >= 0 && n < s.batch,
                "pretraining data: a row's segments must each hold a word and fit the sequence");
  std::int32_t* ids = batch.ids.data() + n * s.sequence;
  std::int32_t* segments = batch.segments.data() + n * s.sequence;
  std::int32_t* labels = batch.masked_labels.data() + n * s.sequence;
  std::fill(ids, ids + s.sequence, t.pad);
  std::fill(segments, segments + s.sequence, 0);
  std::fill(labels, labels + s.sequence, kIgnoredLabel);
  std::vector<std::int64_t> word_positions;
  std::int64_t i = 0;
  ids[i++] = t.cls;
  for (std::int32_t w : a) word_positions.push_back(i), ids[i++] = w;
  ids[i++] = t.sep;
  for (std::int32_t w : b) segments[i] = 1, word_positions.push_back(i), ids[i++] = w;
  segments[i] = 1, ids[i] = t.sep;
  batch.lengths[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(length);
  batch.next_sentence[static_cast<std::size_t>(n)] = random_next ? 1 : 0;
  // The predicted positions, chosen by a shuffle: 15 % of the words, rounded, at least one and
  // at most max_predictions (create_pretraining_data.py takes 15 % of all tokens, [CLS] and
  // [SEP] included: one more at most).
  const auto predicted = std::min<std::int64_t>(
      s.max_predictions,
      std::max<std::int64_t>(
          1, std::llround(static_cast<double>(word_positions.size()) * kMaskedShare)));
  splitmix64_shuffle(word_positions, state);
  for (std::int64_t k = 0; k < predicted; ++k) {
    const std::int64_t at = word_positions[static_cast<std::size_t>(k)];
    labels[at] = ids[at];
    const double u = splitmix64_unit(state);
    if (u < 0.8)
      ids[at] = t.mask;
    else if (u < 0.9)
      ids[at] =
          static_cast<std::int32_t>(splitmix64_between(state, t.first_word, s.vocabulary - 1));
  }
}

PretrainingBatch pretraining_batch(const PretrainingShape& s, std::uint64_t seed) {
  PretrainingBatch b = empty_pretraining_batch(s);
  const auto cells = static_cast<std::size_t>(s.batch * s.sequence);
  // Words for every cell at once (Zipf-distributed), from a stream of their own.
  const std::vector<std::int32_t> words = zipf_ids(zipf(s.special.first_word, s.vocabulary, 1.0),
                                                   static_cast<std::int64_t>(cells), seed);
  std::uint64_t state = splitmix64(seed ^ 0x707265747261696eull);  // "pretrain"
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const std::int64_t length = splitmix64_unit(state) < kFullShare
                                    ? s.sequence
                                    : splitmix64_between(state, kShortestSequence, s.sequence);
    const std::int64_t first =
        splitmix64_between(state, 1, length - 4);  // A's words; B gets the rest
    // The row's own cells of the drawn words, past [CLS] and past A's [SEP].
    const std::int32_t* row = words.data() + n * s.sequence;
    const bool random_next = (splitmix64_next(state) & 1) != 0;
    write_pretraining_row(s, n, {row + 1, static_cast<std::size_t>(first)},
                          {row + first + 2, static_cast<std::size_t>(length - first - 3)},
                          random_next, state, b);
  }
  return b;
}

}  // namespace dlbench::data
