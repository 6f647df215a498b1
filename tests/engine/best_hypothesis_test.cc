// Beam search's final choice (nn::best_hypothesis) on hand-computed cases: length normalization
// ((5 + len) / 6)^0.6 lets a longer hypothesis of lower raw score win; the coverage penalty
// 0.1 x sum log(min(coverage, 1)) lets the hypothesis that attended to every source word win;
// positions never attended to count 0, and ties go to the lower k.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/nn/sequence_decoder.h"

namespace dlbench::nn {
namespace {

const DecodingGraphs::Penalties kGnmt;  // alpha 0.6, constant 5, coverage 0.1

TEST(BestHypothesisTest, LengthNormalizationFavoursTheLongerOfCloseScores) {
  // -2.0 / (7/6)^0.6 = -1.823; -2.2 / (11/6)^0.6 = -1.529: the second wins though it scored less.
  const std::vector<float> scores = {-2.0f, -2.2f}, coverage = {1, 1, 1, 1};
  const std::vector<std::int32_t> lengths = {2, 6};
  EXPECT_EQ(best_hypothesis(scores, lengths, coverage, kGnmt), 1);
  // Without normalization (alpha 0) the raw scores decide.
  DecodingGraphs::Penalties raw = kGnmt;
  raw.length_alpha = 0;
  EXPECT_EQ(best_hypothesis(scores, lengths, coverage, raw), 0);
  // Far apart, the raw score still decides: -3.0 / 1.439 = -2.085 below -1.823.
  const std::vector<float> apart = {-2.0f, -3.0f};
  EXPECT_EQ(best_hypothesis(apart, lengths, coverage, kGnmt), 0);
}

TEST(BestHypothesisTest, CoveragePenaltyFavoursTheHypothesisThatAttendedEverywhere) {
  const std::vector<float> scores = {-2.0f, -2.0f, -2.0f};
  const std::vector<std::int32_t> lengths = {4, 4, 4};
  // Rows: a word attended to 0.2 in all (0.1 x log 0.2 = -0.161), every word fully (0), and a
  // word never attended to (counts 0) beside one attended to more than once (min 1: 0).
  const std::vector<float> coverage = {0.2f, 1.5f, 1.0f, 1.0f, 0.0f, 2.0f};
  EXPECT_EQ(best_hypothesis(scores, lengths, coverage, kGnmt), 1);  // 1 and 2 tie at 0: lower k
  const std::vector<float> only_first = {0.2f, 1.5f, 0.9f, 1.0f};
  const std::vector<float> two = {-2.0f, -2.0f};
  const std::vector<std::int32_t> two_lengths = {4, 4};
  // 0.1 x log 0.9 = -0.0105 beats -0.161.
  EXPECT_EQ(best_hypothesis(two, two_lengths, only_first, kGnmt), 1);
  DecodingGraphs::Penalties no_coverage = kGnmt;
  no_coverage.coverage_weight = 0;
  EXPECT_EQ(best_hypothesis(two, two_lengths, only_first, no_coverage), 0);  // a tie: lower k
}

TEST(BestHypothesisTest, AnUnreachedHypothesisNeverWins) {
  const std::vector<float> scores = {-INFINITY, -40.0f}, coverage = {1, 1};
  const std::vector<std::int32_t> lengths = {0, 50};
  EXPECT_EQ(best_hypothesis(scores, lengths, coverage, kGnmt), 1);
}

}  // namespace
}  // namespace dlbench::nn
