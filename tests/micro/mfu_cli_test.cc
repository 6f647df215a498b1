// MFU end to end on the CPU (issue 19): a tiny `micro gemm` stored in a database of the test's
// own, then a run on the same machine prints its share of the measured fp32 peak and stores
// `compute/mfu`; without a stored gemm the run says so honestly; the report's machine card
// shows the measured compute.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::dlbench;

constexpr const char* kTinyGemm =
    "micro gemm --device cpu --precision fp32 --shapes 64,32x48x16 --iters 2 --warmup 1 "
    "--min-seconds 0 --samples 16";
constexpr const char* kTinyRun =
    "run resnet50 --device cpu --input 32 --batch 2 --steps 2 --warmup 1 --no-telemetry";

std::string temp_path(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/dlbench-mfu-" + name;
  std::remove(path.c_str());
  return path;
}

TEST(MfuCliTest, RunPrintsAndStoresItsShareOfTheMeasuredFp32Peak) {
  const std::string db = temp_path("peak.db");
  auto gemm = dlbench("--db " + db + " " + kTinyGemm);
  ASSERT_EQ(gemm.exit_code, 0) << gemm.out << gemm.err;
  auto run = dlbench("--db " + db + " " + kTinyRun);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("% of the measured fp32 peak (micro gemm run 1)"), std::string::npos)
      << run.out;

  auto runs = dlbench("--db " + db + " --json runs show 2");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("\"compute/mfu\""), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("micro gemm run 1"), std::string::npos) << runs.out;

  // The report: MFU where the achieved throughput is, the measured compute on the card.
  const std::string html = temp_path("report.html");
  auto report = dlbench("--db " + db + " report --runs 2 --out " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = testing::read_file(html);
  EXPECT_NE(page.find("Compute (measured, cpu)"), std::string::npos);
  EXPECT_NE(page.find("(micro gemm run 1)"), std::string::npos);
  EXPECT_NE(page.find("bf16 not measured"), std::string::npos);
  EXPECT_NE(page.find("MFU %"), std::string::npos);
}

TEST(MfuCliTest, WithoutAStoredGemmTheRunSaysSo) {
  const std::string db = temp_path("none.db");
  auto run = dlbench("--db " + db + " " + kTinyRun);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("MFU: no measured fp32 peak of cpu on this machine; run `dlbench micro "
                         "gemm --device cpu`"),
            std::string::npos)
      << run.out;
  auto runs = dlbench("--db " + db + " --json runs show 1");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_EQ(runs.out.find("compute/mfu"), std::string::npos) << runs.out;

  const std::string html = temp_path("none.html");
  ASSERT_EQ(dlbench("--db " + db + " report --runs 1 --out " + html).exit_code, 0);
  EXPECT_NE(testing::read_file(html).find("not measured (run `dlbench micro gemm --device cpu`)"),
            std::string::npos);
}

}  // namespace
}  // namespace dlbench
