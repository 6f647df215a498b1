// dlbench micro gemm, bandwidth, transfer and p2p on this machine's GPUs, small sizes: every
// precision's products checked, every copy checked. Labelled gpu; each test skips without a
// GPU (p2p without two). Speed is not asserted here: `dlbench micro` measures it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/json_text.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

nlohmann::json run_json(const std::string& args) {
  auto r = testing::dlbench(args + " --json --no-store");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(MicroGpuTest, GemmOfEveryPrecisionIsRight) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  const auto doc = run_json(
      "micro gemm --device cuda --precision all --shapes 256,512x256x1024,1024x512x4096 "
      "--iters 3 --warmup 1 --min-seconds 0 --algos 8");
  ASSERT_TRUE(doc.contains("rows"));
  EXPECT_EQ(doc["wrong"], 0);
  EXPECT_NE(doc["library"].get<std::string>().find("cuBLASLt"), std::string::npos);
  for (const auto& row : doc["rows"]) {
    const std::string p = row["precision"];
    if (row.contains("skipped")) {
      // fp8 only where the GPU has none; everything else must run.
      EXPECT_EQ(p, "fp8") << dump_json(row);
      continue;
    }
    EXPECT_EQ(row["wrong"], 0) << dump_json(row);
    EXPECT_EQ(row["checked"], 64) << dump_json(row);
    EXPECT_GT(row["rate"].get<double>(), 0) << dump_json(row);
    EXPECT_GE(row["candidates"].get<int>(), 1) << dump_json(row);
  }
  std::printf("%s\n", dump_json(doc["summary"], 1).c_str());
}

TEST(MicroGpuTest, GemmTableShowsThePeaks) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  auto r = testing::dlbench(
      "micro gemm --precision bf16 --shapes 2048 --iters 3 --min-seconds 0 "
      "--no-store");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# Best per precision"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("datasheet"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Wrong entries: 0 of 64 checked"), std::string::npos) << r.out;
}

TEST(MicroGpuTest, BandwidthIsRightAndTheoreticalIsKnown) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  const auto doc = run_json("micro bandwidth --device cuda --size 64M --iters 3 --warmup 1");
  ASSERT_TRUE(doc.contains("rows"));
  EXPECT_EQ(doc["wrong"], 0);
  ASSERT_EQ(doc["rows"].size(), 3u);
  for (const auto& row : doc["rows"]) {
    EXPECT_EQ(row["wrong"], 0) << dump_json(row);
    EXPECT_EQ(row["checked"], (64 << 20) / 4) << dump_json(row);
    EXPECT_GT(row["best_gb_per_s"].get<double>(), 0) << dump_json(row);
  }
  EXPECT_TRUE(doc["theoretical_gb_per_s"].is_number()) << dump_json(doc);
}

TEST(MicroGpuTest, TransfersAreRight) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  const auto doc = run_json("micro transfer --min-bytes 4K --max-bytes 4M --iters 2");
  ASSERT_TRUE(doc.contains("rows"));
  EXPECT_EQ(doc["wrong"], 0);
  EXPECT_EQ(doc["rows"].size(), 2u * 2u * 6u);  // h2d/d2h x pinned/pageable x 4K..4M by 4
  for (const auto& row : doc["rows"]) EXPECT_EQ(row["wrong"], 0) << dump_json(row);
}

TEST(MicroGpuTest, PeerCopiesAreRight) {
  if (gpu_count() < 2) GTEST_SKIP() << "p2p needs 2 GPUs";
  const auto doc = run_json("micro p2p --size 16M --iters 2");
  ASSERT_TRUE(doc.contains("pairs"));
  EXPECT_EQ(doc["pairs"].size(), std::size_t(gpu_count() * (gpu_count() - 1)));
  EXPECT_EQ(doc["wrong"], 0);
}

}  // namespace
}  // namespace dlbench
