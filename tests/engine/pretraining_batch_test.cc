// BERT's synthetic pretraining batches: each row is [CLS] A [SEP] B [SEP] then padding, with
// segments, positions and lengths to match; 15 % of the words are predicted, their inputs
// masked 80 / 10 / 10 as BERT's script does; 90 % of the rows fill the sequence; the same for
// a seed; and a synthetic source's inputs of one batch agree with each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/pretraining_batch.h"
#include "engine/data/synthetic.h"

namespace dlbench::data {
namespace {

PretrainingShape shape(std::int64_t batch, std::int64_t sequence) {
  PretrainingShape s;
  s.batch = batch, s.sequence = sequence;
  return s;
}

TEST(PretrainingBatch, RowsAreClsASepBSepThenPadding) {
  const PretrainingShape s = shape(300, 32);
  const PretrainingBatch b = pretraining_batch(s, 7);
  const TokenIds t;
  ASSERT_EQ(b.ids.size(), 300u * 32u);
  ASSERT_EQ(b.lengths.size(), 300u);
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const std::int64_t length = b.lengths[n], base = n * s.sequence;
    ASSERT_GE(length, 5);
    ASSERT_LE(length, s.sequence);
    EXPECT_EQ(b.ids[base], t.cls) << n;
    EXPECT_EQ(b.ids[base + length - 1], t.sep) << n;
    std::int64_t seps = 0, first_sep = -1;
    for (std::int64_t i = 0; i < s.sequence; ++i) {
      const std::int32_t id = b.ids[base + i], segment = b.segments[base + i];
      EXPECT_EQ(b.positions[base + i], i);
      if (i >= length) {
        EXPECT_EQ(id, t.pad) << n << " " << i;
        EXPECT_EQ(segment, 0);
        EXPECT_EQ(b.masked_labels[base + i], kIgnoredLabel);
        continue;
      }
      if (id == t.sep && b.masked_labels[base + i] == kIgnoredLabel) {
        ++seps;
        if (first_sep < 0) first_sep = i;
      }
      EXPECT_EQ(segment, first_sep < 0 || i == first_sep ? 0 : 1) << n << " " << i;
    }
    EXPECT_EQ(seps, 2) << n;
    EXPECT_GE(first_sep, 2) << n;           // A has a word
    EXPECT_LE(first_sep, length - 3) << n;  // so has B
    EXPECT_TRUE(b.next_sentence[n] == 0 || b.next_sentence[n] == 1);
  }
}

TEST(PretrainingBatch, FifteenPercentOfTheWordsArePredictedAndMostlyMasked) {
  const PretrainingShape s = shape(2000, 128);
  const PretrainingBatch b = pretraining_batch(s, 11);
  const TokenIds t;
  std::int64_t full = 0, masked = 0, kept = 0, predicted = 0, nsp = 0;
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const std::int64_t length = b.lengths[n], base = n * s.sequence;
    full += length == s.sequence;
    nsp += b.next_sentence[n];
    const auto words = static_cast<double>(length - 3);
    std::int64_t here = 0;
    for (std::int64_t i = 0; i < length; ++i) {
      const std::int32_t label = b.masked_labels[base + i];
      if (label == kIgnoredLabel) continue;
      ++here;
      EXPECT_GE(label, t.first_word);
      EXPECT_LT(label, s.vocabulary);
      masked += b.ids[base + i] == t.mask;
      kept += b.ids[base + i] == label;
    }
    EXPECT_EQ(here, std::min<std::int64_t>(s.max_predictions,
                                           std::max<std::int64_t>(1, std::llround(words * 0.15))))
        << n;
    predicted += here;
  }
  EXPECT_NEAR(static_cast<double>(full) / 2000.0, 0.9, 0.03);
  EXPECT_NEAR(static_cast<double>(nsp) / 2000.0, 0.5, 0.05);
  EXPECT_NEAR(static_cast<double>(masked) / static_cast<double>(predicted), 0.8, 0.02);
  // Kept: the 10 % left alone, and the few random words that drew themselves.
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(predicted), 0.1, 0.02);
}

TEST(PretrainingBatch, TheSameForASeedAndRefusesShapesThatCannotHoldARow) {
  const PretrainingShape s = shape(8, 16);
  EXPECT_EQ(pretraining_batch(s, 3).ids, pretraining_batch(s, 3).ids);
  EXPECT_NE(pretraining_batch(s, 3).ids, pretraining_batch(s, 4).ids);
  EXPECT_THROW(pretraining_batch(shape(2, 4), 1), Error);
  PretrainingShape tiny = s;
  tiny.vocabulary = 999;  // nothing past the special ids
  EXPECT_THROW(pretraining_batch(tiny, 1), Error);
}

// Ids and lengths drawn as two inputs of one source describe the same rows.
TEST(PretrainingBatch, ASourceFillsMatchingFields) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  const std::int64_t batch = 6, sequence = 24;
  std::vector<InputSpec> specs = {{"tokens",
                                   {batch * sequence},
                                   DType::kI32,
                                   pretraining(PretrainingField::kIds, 30522, sequence, 20),
                                   "token ids"},
                                  {"lengths",
                                   {batch},
                                   DType::kI32,
                                   pretraining(PretrainingField::kLengths, 30522, sequence, 20),
                                   "lengths"}};
  SyntheticSource source(specs, 5);
  std::vector<std::int32_t> ids(batch * sequence), lengths(batch);
  const std::vector<Tensor> inputs = {
      Tensor(ids.data(), {batch * sequence}, DType::kI32, Device::cpu()),
      Tensor(lengths.data(), {batch}, DType::kI32, Device::cpu())};
  source.fill(*be, inputs);
  PretrainingShape s = shape(batch, sequence);
  const PretrainingBatch b = pretraining_batch(s, 5);
  EXPECT_EQ(ids, b.ids);
  EXPECT_EQ(lengths, b.lengths);
  for (std::int64_t n = 0; n < batch; ++n) EXPECT_EQ(ids[n * sequence + lengths[n] - 1], 102);
}

}  // namespace
}  // namespace dlbench::data
