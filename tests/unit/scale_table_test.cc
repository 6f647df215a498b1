// The table `dlbench scale` prints (cli/scale_table.h), from made-up runs: the mean step beside
// the median, the slow steps counted per GPU count, and who started them late.
#include "cli/scale_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dlbench::cli {
namespace {

result::RunResult run_on(int gpus, double mean_ms) {
  result::RunResult r;
  r.config.model = "resnet50";
  r.config.mode = Mode::kTrain;
  r.config.precision = Precision::kFp16;
  r.config.batch = 256;
  r.step.median_ms = 40.0;
  r.step.mean_ms = mean_ms;
  if (gpus > 1) {
    result::DataParallel dp;
    dp.replicas = gpus;
    dp.replicas_identical = true;
    // Four steps of 40 ms; in the third, replica 1 started 9 ms late and everyone took 50 ms.
    for (int r = 0; r < gpus; ++r)
      dp.replica_steps.push_back(
          {{0, 40, r == 1 ? 89.0 : 80.0, 130}, {40, 40, r == 1 ? 41.0 : 50.0, 40}});
    r.data_parallel = dp;
  }
  return r;
}

TEST(ScaleTableTest, SlowStepsAreCountedAndTheLateReplicaNamed) {
  const std::vector<result::RunResult> runs = {run_on(1, 40.0), run_on(2, 42.5)};
  const std::vector<result::ScalingPoint> points = {{1, 6400, 1.0, 1.0}, {2, 12047, 1.88, 0.94}};
  std::ostringstream out;
  print_scale_table(out, runs, points);
  const std::string text = out.str();
  EXPECT_NE(text.find("step ms p50       mean  slow steps"), std::string::npos) << text;
  // One GPU has no replicas to compare: "-"; two GPUs had one slow step of four.
  EXPECT_NE(text.find("40.0       40.0           -  -"), std::string::npos) << text;
  EXPECT_NE(text.find("40.0       42.5         1/4  identical"), std::string::npos) << text;
  EXPECT_NE(text.find("  2 GPUs: 1 of 4 steps over 1.10x the median step (40.0 ms): step 3 50.0 "
                      "ms (replica 1 started it 9.0 ms after the first)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace dlbench::cli
