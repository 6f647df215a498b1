// HR@10 and NDCG@10 from scored candidate lists (bench/runner/ranking_eval.h): the held-out item
// is candidate 0 of each list, its rank the count of higher scores plus half the ties.
#include "bench/runner/ranking_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dlbench::runner {
namespace {

TEST(RankingTest, RanksCountHigherScoresAndHalfTheTies) {
  const std::vector<std::int64_t> offsets = {0, 3, 7, 10};
  const std::vector<double> scores = {5, 1, 2,     // first: rank 0
                                      1, 5, 5, 0,  // two above: rank 2
                                      3, 3, 1};    // one tie: rank 0.5
  const RankingScores top10 = rank_held_out(offsets, scores, 10);
  EXPECT_EQ(top10.lists, 3);
  EXPECT_DOUBLE_EQ(top10.hit_rate, 1.0);
  EXPECT_DOUBLE_EQ(top10.ndcg, (1.0 + 1.0 / std::log2(4.0) + 1.0 / std::log2(2.5)) / 3);
  const RankingScores top1 = rank_held_out(offsets, scores, 1);  // rank 2 is out
  EXPECT_DOUBLE_EQ(top1.hit_rate, 2.0 / 3);
  EXPECT_DOUBLE_EQ(top1.ndcg, (1.0 + 1.0 / std::log2(2.5)) / 3);
}

TEST(RankingTest, NoListsScoreNothing) {
  const std::vector<std::int64_t> offsets = {0};
  const RankingScores none = rank_held_out(offsets, {}, 10);
  EXPECT_EQ(none.lists, 0);
  EXPECT_EQ(none.hit_rate, 0.0);
}

}  // namespace
}  // namespace dlbench::runner
