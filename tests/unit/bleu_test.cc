// Corpus BLEU over token ids (bench/runner/bleu.h) on hand-computed examples: the precisions of
// each order with clipped counts, SacreBLEU's "exp" smoothing, the brevity penalty, counts summed
// over a corpus rather than scores averaged, and the zero cases. Each expected score was worked
// out by hand from the counts written beside it.
#include "bench/runner/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dlbench::runner {
namespace {

using Ids = std::vector<std::int32_t>;

Bleu score(const std::vector<std::pair<Ids, Ids>>& corpus) {
  BleuCounts counts;
  for (const auto& [hypothesis, reference] : corpus) add_sentence(hypothesis, reference, counts);
  return corpus_bleu(counts);
}

TEST(BleuTest, AnExactTranslationScores100) {
  const Bleu b = score({{{5, 6, 7, 8, 9}, {5, 6, 7, 8, 9}}});
  EXPECT_DOUBLE_EQ(b.score, 100.0);
  EXPECT_DOUBLE_EQ(b.brevity_penalty, 1.0);
}

TEST(BleuTest, EachOrderCountsItsMatches) {
  // 1-grams 4/6, 2-grams 3/5 (1 2, 2 3, 3 4), 3-grams 2/4, 4-grams 1/3; equal lengths:
  // 100 (4/6 * 3/5 * 2/4 * 1/3)^(1/4) = 50.8133.
  const Bleu b = score({{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 7, 8}}});
  EXPECT_NEAR(b.precisions[0], 400.0 / 6, 1e-9);
  EXPECT_NEAR(b.precisions[1], 60.0, 1e-9);
  EXPECT_NEAR(b.precisions[2], 50.0, 1e-9);
  EXPECT_NEAR(b.precisions[3], 100.0 / 3, 1e-9);
  EXPECT_NEAR(b.score, 50.813274815461476, 1e-9);
}

TEST(BleuTest, RepeatedWordsAreClippedAndMissingOrdersSmoothed) {
  // "1 1 1 1" against "1 2 3 4": 1-grams clipped to 1 of 4 (25 %); no 2-, 3- or 4-gram matches,
  // so the exp smoothing gives 100 / (2 * 3), 100 / (4 * 2) and 100 / (8 * 1):
  // (25 * 16.667 * 12.5 * 12.5)^(1/4) = 15.9736.
  const Bleu b = score({{{1, 1, 1, 1}, {1, 2, 3, 4}}});
  EXPECT_NEAR(b.precisions[0], 25.0, 1e-9);
  EXPECT_NEAR(b.precisions[1], 100.0 / 6, 1e-9);
  EXPECT_NEAR(b.precisions[2], 12.5, 1e-9);
  EXPECT_NEAR(b.precisions[3], 12.5, 1e-9);
  EXPECT_NEAR(b.score, 15.97357760615681, 1e-9);
}

TEST(BleuTest, AShortHypothesisPaysTheBrevityPenalty) {
  // Every n-gram matches, but 4 tokens against 8: exp(1 - 8 / 4) = e^-1.
  const Bleu b = score({{{1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}}});
  EXPECT_NEAR(b.brevity_penalty, std::exp(-1.0), 1e-12);
  EXPECT_NEAR(b.score, 100.0 * std::exp(-1.0), 1e-9);
  // A longer one pays nothing for its length (its precisions pay instead).
  EXPECT_DOUBLE_EQ(score({{{1, 2, 3, 4, 5}, {1, 2, 3, 4}}}).brevity_penalty, 1.0);
}

TEST(BleuTest, TheCorpusSumsCountsAcrossSentences) {
  // The first example, and "9 9 8" against "9 8 7 6": 1-grams 4/6 + 2/3, 2-grams 3/5 + 1/2,
  // 3-grams 2/4 + 0/1, 4-grams 1/3 + 0/0; lengths 9 against 10:
  // 100 e^(1 - 10/9) (6/9 * 4/7 * 2/5 * 1/3)^(1/4) = 42.4813. The mean of the two sentences'
  // own scores would be something else.
  const Bleu b = score({{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 7, 8}}, {{9, 9, 8}, {9, 8, 7, 6}}});
  EXPECT_NEAR(b.score, 42.481262473249, 1e-9);
}

TEST(BleuTest, NothingToScoreIsZero) {
  EXPECT_EQ(score({{{}, {1, 2, 3, 4}}}).score, 0.0);
  // Three tokens have no 4-grams: SacreBLEU scores such a corpus 0, however right the words.
  EXPECT_EQ(score({{{1, 2, 3}, {1, 2, 3}}}).score, 0.0);
  EXPECT_EQ(score({}).score, 0.0);
}

}  // namespace
}  // namespace dlbench::runner
