#include "engine/data/translation_batch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/backend/op_params.h"
#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/input_spec.h"
#include "engine/data/synthetic.h"

namespace dlbench::data {
namespace {

// Source lengths: exp(N(ln 24, 0.55)), a median of 24 tokens and a long tail; the target's is
// its source's times exp(N(0.05, 0.2)) (German in BPE runs a little longer than English).
constexpr double kMedianLength = 24.0;
constexpr double kLengthSpread = 0.55;
constexpr double kTargetRatioMean = 0.05, kTargetRatioSpread = 0.2;
constexpr std::int32_t kIgnored = backend::CrossEntropyParams{}.ignore_label;

std::int64_t clamp_length(double length, std::int64_t sequence) {
  return std::clamp<std::int64_t>(std::llround(length), kShortestSentence, sequence);
}

void check_translation_shape(const TranslationShape& s) {
  DLBENCH_CHECK(s.batch >= 1, "translation data: a batch of " + std::to_string(s.batch) +
                                  " sentence pairs; it needs at least one");
  DLBENCH_CHECK(s.sequence >= kShortestSentence,
                "translation data: sentences padded to " + std::to_string(s.sequence) +
                    " positions; they need at least " + std::to_string(kShortestSentence));
  DLBENCH_CHECK(s.vocabulary > s.special.first_word, "translation data: a vocabulary of " +
                                                         std::to_string(s.vocabulary) +
                                                         " ids has no words past the special ones");
}

}  // namespace

const char* to_string(TranslationField f) {
  switch (f) {
    case TranslationField::kSourceIds:
      return "source_ids";
    case TranslationField::kSourceLengths:
      return "source_lengths";
    case TranslationField::kTargetIds:
      return "target_ids";
    case TranslationField::kTargetLabels:
      return "target_labels";
    case TranslationField::kTargetLengths:
      return "target_lengths";
  }
  return "unknown";
}

bool is_per_token(TranslationField f) {
  return f != TranslationField::kSourceLengths && f != TranslationField::kTargetLengths;
}

const std::vector<std::int32_t>& TranslationBatch::field(TranslationField f) const {
  switch (f) {
    case TranslationField::kSourceIds:
      return source_ids;
    case TranslationField::kSourceLengths:
      return source_lengths;
    case TranslationField::kTargetIds:
      return target_ids;
    case TranslationField::kTargetLabels:
      return target_labels;
    case TranslationField::kTargetLengths:
      return target_lengths;
  }
  return source_ids;
}

std::vector<std::int32_t> laid_out(const TranslationBatch& batch, TranslationField field,
                                   std::int64_t sequence, bool time_major) {
  const std::vector<std::int32_t>& values = batch.field(field);
  if (!time_major || !is_per_token(field)) return values;
  const auto count = static_cast<std::int64_t>(values.size());
  const std::int64_t sentences = count / sequence;
  std::vector<std::int32_t> out(values.size());
  for (std::int64_t n = 0; n < sentences; ++n)
    for (std::int64_t t = 0; t < sequence; ++t) out[t * sentences + n] = values[n * sequence + t];
  return out;
}

std::int64_t TranslationBatch::tokens() const {
  std::int64_t total = 0;
  for (std::int32_t n : source_lengths) total += n;
  for (std::int32_t n : target_lengths) total += n;
  return total;
}

TranslationBatch empty_translation_batch(const TranslationShape& s) {
  check_translation_shape(s);
  const auto cells = static_cast<std::size_t>(s.batch * s.sequence);
  TranslationBatch b;
  b.source_ids.assign(cells, s.special.pad);
  b.target_ids.assign(cells, s.special.pad);
  b.target_labels.assign(cells, kIgnored);
  b.source_lengths.assign(static_cast<std::size_t>(s.batch), 0);
  b.target_lengths.assign(static_cast<std::size_t>(s.batch), 0);
  return b;
}

void write_translation_row(const TranslationShape& s, std::int64_t n,
                           std::span<const std::int32_t> source,
                           std::span<const std::int32_t> target, TranslationBatch& b) {
  const SentenceIds& t = s.special;
  const auto source_length = static_cast<std::int64_t>(source.size()) + 1;
  const auto target_length = static_cast<std::int64_t>(target.size()) + 1;
  DLBENCH_CHECK(n >= 0 && n < s.batch && source_length <= s.sequence && target_length <= s.sequence,
                "translation data: a sentence and its [EOS] must fit the sequence");
  const auto row = static_cast<std::size_t>(n * s.sequence);
  const auto clear = [&](std::vector<std::int32_t>& v, std::int32_t value) {
    std::fill(v.begin() + static_cast<std::ptrdiff_t>(row),
              v.begin() + static_cast<std::ptrdiff_t>(row + static_cast<std::size_t>(s.sequence)),
              value);
  };
  clear(b.source_ids, t.pad), clear(b.target_ids, t.pad), clear(b.target_labels, kIgnored);
  std::copy(source.begin(), source.end(), b.source_ids.begin() + static_cast<std::ptrdiff_t>(row));
  b.source_ids[row + source.size()] = t.eos;
  // The target sentence then [EOS] is what the decoder predicts; it reads the same shifted right
  // behind [BOS].
  std::copy(target.begin(), target.end(),
            b.target_labels.begin() + static_cast<std::ptrdiff_t>(row));
  b.target_labels[row + target.size()] = t.eos;
  b.target_ids[row] = t.bos;
  std::copy(target.begin(), target.end(),
            b.target_ids.begin() + static_cast<std::ptrdiff_t>(row + 1));
  b.source_lengths[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(source_length);
  b.target_lengths[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(target_length);
}

TranslationBatch translation_batch(const TranslationShape& s, std::uint64_t seed) {
  TranslationBatch b = empty_translation_batch(s);
  const auto cells = static_cast<std::size_t>(s.batch * s.sequence);
  // Words for every cell of both sides (Zipf-distributed), from a stream of their own.
  const std::vector<std::int32_t> words = zipf_ids(zipf(s.special.first_word, s.vocabulary, 1.0),
                                                   2 * static_cast<std::int64_t>(cells), seed);
  std::uint64_t state = splitmix64(seed ^ 0x7472616e736c6174ull);  // "translat"
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const double drawn = kMedianLength * std::exp(kLengthSpread * splitmix64_normal(state));
    const std::int64_t source = clamp_length(drawn, s.sequence);
    const std::int64_t target =
        clamp_length(static_cast<double>(source) *
                         std::exp(kTargetRatioMean + kTargetRatioSpread * splitmix64_normal(state)),
                     s.sequence);
    const std::size_t row = static_cast<std::size_t>(n * s.sequence);
    write_translation_row(s, n, {words.data() + row, static_cast<std::size_t>(source - 1)},
                          {words.data() + cells + row, static_cast<std::size_t>(target - 1)}, b);
  }
  return b;
}

}  // namespace dlbench::data
