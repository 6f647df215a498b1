// Translation batches, synthetic: sentence pairs as a translation model's trainer feeds them,
// drawn instead of read. Source and target are each padded to `sequence` positions. Sentence
// lengths are log-normal (median 24 tokens, as BPE-segmented news sentences roughly are; a model
// of the shape, not fitted to WMT), the target's a little longer than its source's, both clamped to
// [kShortestSentence, sequence]. A sentence is Zipf-distributed words (exponent 1) closed by
// [EOS]. The decoder reads [BOS] and the target's tokens but its last (teacher forcing) and
// predicts the target's tokens: target_labels, the loss's ignored label on padding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dlbench::data {

// Special ids: padding 0 (the lengths mask it, the loss leaves its -100 labels out), [BOS] 1,
// [EOS] 2, [UNK] 3 (fairseq numbers [BOS] 0 and padding 1); words from first_word on.
struct SentenceIds {
  std::int32_t pad = 0, bos = 1, eos = 2, unk = 3;
  std::int32_t first_word = 4;
};

struct TranslationShape {
  std::int64_t batch = 1;
  std::int64_t sequence = 64;  // positions of source and target alike
  std::int64_t vocabulary = 32000;
  SentenceIds special = {};
};

// Which of a batch's tensors an input holds.
enum class TranslationField {
  kSourceIds,      // [batch * sequence]
  kSourceLengths,  // [batch]
  kTargetIds,      // [batch * sequence]: the decoder's input
  kTargetLabels,   // [batch * sequence]: what it predicts
  kTargetLengths,  // [batch]
};
// Its name as a model's input and in a peer's --inputs: "source_ids", "target_labels", ...
const char* to_string(TranslationField field);
// Whether the field has a value per position ([batch * sequence]) or per sentence ([batch]).
bool is_per_token(TranslationField field);

// Two words and [EOS].
inline constexpr std::int64_t kShortestSentence = 3;

struct TranslationBatch {
  std::vector<std::int32_t> source_ids, target_ids, target_labels;  // [batch * sequence]
  std::vector<std::int32_t> source_lengths, target_lengths;         // [batch]
  const std::vector<std::int32_t>& field(TranslationField f) const;
  // The tokens that are not padding, source and target: what tokens/s counts.
  std::int64_t tokens() const;
};

// A field's values as a model reads them (Distribution::time_major): per-token fields of
// [batch * sequence] transposed to [sequence * batch] where time_major; otherwise as they are.
std::vector<std::int32_t> laid_out(const TranslationBatch& batch, TranslationField field,
                                   std::int64_t sequence, bool time_major);

// A batch of padding rows (lengths 0) for write_translation_row to fill.
TranslationBatch empty_translation_batch(const TranslationShape& shape);
// Row n becomes the source sentence then [EOS], and the target sentence then [EOS] as the labels,
// [BOS] and the target sentence as the decoder's input; an internal error when a side does not
// fit with its [EOS].
void write_translation_row(const TranslationShape& shape, std::int64_t n,
                           std::span<const std::int32_t> source,
                           std::span<const std::int32_t> target, TranslationBatch& batch);

// Deterministic per seed on every machine; an internal error when there is no sentence, a
// sentence cannot fit or the vocabulary has no words (the model sizes them).
TranslationBatch translation_batch(const TranslationShape& shape, std::uint64_t seed);

}  // namespace dlbench::data
