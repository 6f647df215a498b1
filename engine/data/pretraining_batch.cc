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
constexpr std::int64_t kShortest = 5;  // [CLS] w [SEP] w [SEP]

std::int64_t uniform(std::uint64_t& state, std::int64_t low, std::int64_t high_inclusive) {
  return low + static_cast<std::int64_t>(splitmix64_next(state) %
                                         static_cast<std::uint64_t>(high_inclusive - low + 1));
}

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

PretrainingBatch pretraining_batch(const PretrainingShape& s, std::uint64_t seed) {
  const TokenIds& t = s.special;
  DLBENCH_CHECK(s.batch >= 1 && s.sequence >= kShortest,
                "pretraining data: sequences need at least " + std::to_string(kShortest) +
                    " positions ([CLS] A [SEP] B [SEP])");
  DLBENCH_CHECK(s.vocabulary > t.first_word && s.max_predictions >= 1,
                "pretraining data: the vocabulary has no word ids past the special ones");
  const std::size_t cells = static_cast<std::size_t>(s.batch * s.sequence);
  PretrainingBatch b;
  b.ids.assign(cells, t.pad);
  b.segments.assign(cells, 0);
  b.masked_labels.assign(cells, kIgnoredLabel);
  b.positions.resize(cells);
  for (std::size_t i = 0; i < cells; ++i)
    b.positions[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) % s.sequence);
  // Words for every cell at once (Zipf-distributed), from a stream of their own.
  const std::vector<std::int32_t> words =
      zipf_ids(zipf(t.first_word, s.vocabulary, 1.0), static_cast<std::int64_t>(cells), seed);
  std::uint64_t state = splitmix64(seed ^ 0x707265747261696eull);  // "pretrain"
  for (std::int64_t n = 0; n < s.batch; ++n) {
    std::int32_t* ids = b.ids.data() + n * s.sequence;
    std::int32_t* segments = b.segments.data() + n * s.sequence;
    std::int32_t* labels = b.masked_labels.data() + n * s.sequence;
    const std::int64_t length =
        splitmix64_unit(state) < kFullShare ? s.sequence : uniform(state, kShortest, s.sequence);
    const std::int64_t first = uniform(state, 1, length - 4);  // A's words; B gets the rest
    ids[0] = t.cls;
    std::vector<std::int64_t> word_positions;
    for (std::int64_t i = 1; i < length - 1; ++i) {
      if (i == first + 1) {
        ids[i] = t.sep;
        continue;
      }
      ids[i] = words[static_cast<std::size_t>(n * s.sequence + i)];
      word_positions.push_back(i);
    }
    ids[length - 1] = t.sep;
    for (std::int64_t i = first + 2; i < length; ++i) segments[i] = 1;
    b.lengths.push_back(static_cast<std::int32_t>(length));
    b.next_sentence.push_back(static_cast<std::int32_t>(splitmix64_next(state) & 1));
    // The predicted positions, chosen by a shuffle: 15 % of the words, rounded, at least one and
    // at most max_predictions (create_pretraining_data.py takes 15 % of all tokens, [CLS] and
    // [SEP] included: one more at most).
    const auto predicted = std::min<std::int64_t>(
        s.max_predictions,
        std::max<std::int64_t>(
            1, std::llround(static_cast<double>(word_positions.size()) * kMaskedShare)));
    splitmix64_shuffle(word_positions, state);
    for (std::int64_t k = 0; k < predicted; ++k) {
      const std::int64_t i = word_positions[static_cast<std::size_t>(k)];
      labels[i] = ids[i];
      const double u = splitmix64_unit(state);
      if (u < 0.8)
        ids[i] = t.mask;
      else if (u < 0.9)
        ids[i] = static_cast<std::int32_t>(uniform(state, t.first_word, s.vocabulary - 1));
    }
  }
  return b;
}

}  // namespace dlbench::data
