// dlbench scale's arithmetic and the configuration of each GPU count.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/runner/scaling.h"

namespace dlbench::runner {
namespace {

TEST(ScalingTest, SpeedupAndEfficiencyAgainstOneGpu) {
  const auto points = result::scaling_points({1, 2, 4}, {100.0, 190.0, 360.0});
  ASSERT_EQ(points.size(), 3u);
  EXPECT_DOUBLE_EQ(points[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(points[0].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(points[1].speedup, 1.9);
  EXPECT_DOUBLE_EQ(points[1].efficiency, 0.95);  // 190 / (2 x 100)
  EXPECT_DOUBLE_EQ(points[2].speedup, 3.6);
  EXPECT_DOUBLE_EQ(points[2].efficiency, 0.9);  // 360 / (4 x 100)
}

TEST(ScalingTest, ASweepNotStartingAtOneComparesPerGpuThroughput) {
  const auto points = result::scaling_points({2, 8}, {200.0, 760.0});
  EXPECT_DOUBLE_EQ(points[1].speedup, 3.8);
  EXPECT_DOUBLE_EQ(points[1].efficiency, 0.95);  // (760 / 8) / (200 / 2)
}

TEST(ScalingTest, EfficiencyNeedsAUsableBase) {
  EXPECT_DOUBLE_EQ(result::scaling_efficiency(4, 3600, 1, 1000), 0.9);
  EXPECT_TRUE(std::isnan(result::scaling_efficiency(4, 3600, 1, 0)));
  EXPECT_TRUE(std::isnan(result::scaling_efficiency(0, 3600, 1, 1000)));
}

TEST(ScalingTest, OneGpuRunsAloneAndMoreRunAThreadEach) {
  result::RunConfig base;
  base.launch.device = Device::cpu();
  const result::RunConfig one = scaling_config(base, 1);
  EXPECT_EQ(one.launch.mode, LaunchMode::kSingle);
  EXPECT_EQ(one.launch.device, Device::cuda(0));
  const result::RunConfig four = scaling_config(base, 4);
  EXPECT_EQ(four.launch.mode, LaunchMode::kThreads);
  EXPECT_EQ(four.launch.gpus, 4);
}

}  // namespace
}  // namespace dlbench::runner
