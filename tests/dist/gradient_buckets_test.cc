// Gradient buckets: every parameter reduced exactly once, buckets contiguous within a group,
// launched last layer first, and ready only when their earliest node's backward has run.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/nn/gradient_buckets.h"

namespace dlbench::nn {
namespace {

// Four nodes with one 100-element weight each (group 0), then a bias group (group 1) owned
// by nodes 1 and 3, then batch-norm-like f32 parameters (group 2) of nodes 0 and 2.
std::vector<GradientSlot> slots() {
  return {{0, 100, 0, 0, 2},  {100, 100, 1, 0, 2}, {200, 100, 2, 0, 2}, {300, 100, 3, 0, 2},
          {400, 10, 1, 1, 2}, {410, 10, 3, 1, 2},  {420, 4, 0, 2, 4},   {424, 4, 2, 2, 4}};
}

TEST(GradientBucketsTest, CoversEveryElementOnceAndStaysInsideGroups) {
  const auto buckets = plan_gradient_buckets(slots(), 400);  // 200 f16 elements
  std::vector<int> seen(428, 0);
  for (const GradientBucket& b : buckets)
    for (std::int64_t i = b.begin; i < b.end; ++i) ++seen[static_cast<std::size_t>(i)];
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  for (const GradientBucket& b : buckets) {
    const int expected_group = b.begin < 400 ? 0 : (b.begin < 420 ? 1 : 2);
    EXPECT_EQ(b.group, expected_group) << "[" << b.begin << ", " << b.end << ")";
    EXPECT_LE(b.end, expected_group == 0 ? 400 : (expected_group == 1 ? 420 : 428));
  }
}

TEST(GradientBucketsTest, CutsAtTheBucketSizeFromTheLastLayer) {
  const auto buckets = plan_gradient_buckets(slots(), 400);
  // Group 0 splits into [200, 400) ready after node 2 and [0, 200) ready after node 0.
  ASSERT_GE(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].begin, 200);
  EXPECT_EQ(buckets[0].end, 400);
  EXPECT_EQ(buckets[0].ready_after, 2u);
  for (std::size_t i = 1; i < buckets.size(); ++i)
    EXPECT_GE(buckets[i - 1].ready_after, buckets[i].ready_after) << "launch order";
}

TEST(GradientBucketsTest, ReadyAfterTheEarliestNodeInTheBucket) {
  const auto buckets = plan_gradient_buckets(slots(), 1 << 20);  // one bucket per group
  ASSERT_EQ(buckets.size(), 3u);
  const std::size_t expected[] = {0, 1, 0};  // per group: the earliest node holding it
  for (const GradientBucket& b : buckets) EXPECT_EQ(b.ready_after, expected[b.group]);
}

TEST(GradientBucketsTest, AParameterLargerThanABucketIsABucketOfItsOwn) {
  const auto buckets = plan_gradient_buckets(slots(), 20);  // 10 f16 elements
  int group0 = 0;
  for (const GradientBucket& b : buckets)
    if (b.group == 0) {
      ++group0;
      EXPECT_EQ(b.end - b.begin, 100);
    }
  EXPECT_EQ(group0, 4);
}

}  // namespace
}  // namespace dlbench::nn
