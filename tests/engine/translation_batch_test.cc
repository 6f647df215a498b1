// Synthetic translation batches: each source row is words then [EOS], each target's decoder input
// is [BOS] then the labels shifted right, padding past the lengths (ignored labels there);
// lengths follow their modelled distribution; the same for a seed; and a synthetic source's
// fields of one batch agree with each other and count the tokens it served.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/input_spec.h"
#include "engine/data/synthetic.h"
#include "engine/data/translation_batch.h"

namespace dlbench::data {
namespace {

constexpr std::int32_t kIgnored = -100;

TranslationShape shape(std::int64_t batch, std::int64_t sequence) {
  TranslationShape s;
  s.batch = batch, s.sequence = sequence;
  return s;
}

TEST(TranslationBatch, RowsAreWordsThenEosAndTheDecoderReadsTheLabelsShiftedRight) {
  const TranslationShape s = shape(300, 40);
  const TranslationBatch b = translation_batch(s, 7);
  const SentenceIds t;
  ASSERT_EQ(b.source_ids.size(), 300u * 40u);
  ASSERT_EQ(b.target_lengths.size(), 300u);
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const std::int64_t base = n * s.sequence;
    const std::int64_t source = b.source_lengths[n], target = b.target_lengths[n];
    ASSERT_GE(source, kShortestSentence);
    ASSERT_LE(source, s.sequence);
    ASSERT_GE(target, kShortestSentence);
    ASSERT_LE(target, s.sequence);
    EXPECT_EQ(b.target_ids[base], t.bos) << n;
    for (std::int64_t i = 0; i < s.sequence; ++i) {
      const std::int32_t src = b.source_ids[base + i];
      if (i < source - 1) {
        EXPECT_GE(src, t.first_word) << n << " " << i;
        EXPECT_LT(src, s.vocabulary);
      } else {
        EXPECT_EQ(src, i == source - 1 ? t.eos : t.pad) << n << " " << i;
      }
      const std::int32_t label = b.target_labels[base + i];
      if (i < target - 1) {
        EXPECT_GE(label, t.first_word) << n << " " << i;
      } else if (i == target - 1) {
        EXPECT_EQ(label, t.eos) << n;
      } else {
        EXPECT_EQ(label, kIgnored) << n << " " << i;
        EXPECT_EQ(b.target_ids[base + i], t.pad) << n << " " << i;
      }
      if (i >= 1 && i < target) {
        EXPECT_EQ(b.target_ids[base + i], b.target_labels[base + i - 1]) << n << " " << i;
      }
    }
  }
}

TEST(TranslationBatch, LengthsHaveTheModelledMedianAndTargetsRunALittleLonger) {
  const TranslationShape s = shape(4000, 256);  // wide enough that clamping is rare
  const TranslationBatch b = translation_batch(s, 11);
  std::vector<std::int32_t> source = b.source_lengths;
  std::nth_element(source.begin(), source.begin() + 2000, source.end());
  EXPECT_NEAR(source[2000], 24, 1.5);
  double log_ratio = 0;
  for (std::size_t n = 0; n < b.source_lengths.size(); ++n)
    log_ratio += std::log(static_cast<double>(b.target_lengths[n]) / b.source_lengths[n]);
  EXPECT_NEAR(log_ratio / 4000.0, 0.05, 0.02);
  // At a short sequence the long tail is clamped to it.
  const TranslationBatch clamped = translation_batch(shape(4000, 16), 11);
  EXPECT_EQ(*std::max_element(clamped.source_lengths.begin(), clamped.source_lengths.end()), 16);
}

// tokens() counts what is not padding: both sides' lengths.
TEST(TranslationBatch, TokensAreBothSidesLengths) {
  TranslationBatch b;
  b.source_lengths = {3, 5};
  b.target_lengths = {4, 7};
  EXPECT_EQ(b.tokens(), 19);
}

TEST(TranslationBatch, TheSameForASeedAndRefusesShapesThatCannotHoldASentence) {
  const TranslationShape s = shape(8, 16);
  EXPECT_EQ(translation_batch(s, 3).target_ids, translation_batch(s, 3).target_ids);
  EXPECT_NE(translation_batch(s, 3).source_ids, translation_batch(s, 4).source_ids);
  EXPECT_THROW(translation_batch(shape(2, 2), 1), Error);
  EXPECT_THROW(translation_batch(shape(0, 16), 1), Error);
  TranslationShape tiny = s;
  tiny.vocabulary = 4;  // nothing past the special ids
  EXPECT_THROW(translation_batch(tiny, 1), Error);
}

// Ids and lengths drawn as two inputs of one source describe the same sentences, and the source
// counts the tokens of every batch it serves (from 0), the same batch again included; a source
// of other data counts nothing.
TEST(TranslationBatch, ASourceFillsMatchingFieldsAndCountsItsTokens) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  const std::int64_t batch = 6, sequence = 24;
  std::vector<InputSpec> specs = {{"source_ids",
                                   {batch * sequence},
                                   DType::kI32,
                                   translation(TranslationField::kSourceIds, 32000, sequence),
                                   "source"},
                                  {"target_lengths",
                                   {batch},
                                   DType::kI32,
                                   translation(TranslationField::kTargetLengths, 32000, sequence),
                                   "target lengths"}};
  SyntheticSource source(specs, 5);
  // Counted from the start, so a run without warm-up steps has a count before its first step.
  ASSERT_TRUE(source.read_count().has_value());
  EXPECT_EQ(source.read_count()->count, 0);
  std::vector<std::int32_t> ids(batch * sequence), lengths(batch);
  const std::vector<Tensor> inputs = {
      Tensor(ids.data(), {batch * sequence}, DType::kI32, Device::cpu()),
      Tensor(lengths.data(), {batch}, DType::kI32, Device::cpu())};
  source.fill(*be, inputs);
  source.fill(*be, inputs);
  const TranslationBatch b = translation_batch(shape(batch, sequence), 5);
  EXPECT_EQ(ids, b.source_ids);
  EXPECT_EQ(lengths, b.target_lengths);
  ASSERT_TRUE(source.read_count().has_value());
  EXPECT_EQ(source.read_count()->unit, "tokens");
  EXPECT_EQ(source.read_count()->count, 2 * b.tokens());
  const SyntheticSource images({{"images", {2, 3}, DType::kF32, normal(0, 1), "images"}}, 5);
  EXPECT_FALSE(images.read_count().has_value());
}

}  // namespace
}  // namespace dlbench::data
