// dlbench micro gemm and bandwidth end to end on the CPU (tiny sizes): a checked table, the
// JSON, the stored run (in a database of the test's own, never the user's); bad flags are
// one-line usage errors; GPU benchmarks on a machine without one say so clearly.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::dlbench;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string temp_db(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/dlbench-micro-" + name + ".db";
  std::remove(path.c_str());
  return path;
}

bool have_gpu() {
  return dlbench("info --json").out.find("\"cuda_index\": 0") != std::string::npos;
}

constexpr const char* kTinyGemm =
    "micro gemm --device cpu --precision fp32,bf16 --shapes 64,32x48x16 --iters 2 --warmup 1 "
    "--min-seconds 0 --samples 16";

TEST(MicroGemmCliTest, CpuTableIsCheckedAndStored) {
  const std::string db = temp_db("gemm");
  auto r = dlbench(std::string("--db ") + db + " " + kTinyGemm);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("oneDNN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#wrong"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64x64x64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Best per precision"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Wrong entries: 0 of "), std::string::npos) << r.out;
  // bf16 is measured where the CPU has it, and says so plainly where not: never an error.
  EXPECT_TRUE(r.out.find("bf16  -") != std::string::npos) << r.out;
  EXPECT_NE(r.err.find("stored as run 1"), std::string::npos) << r.err;

  auto runs = dlbench("--db " + db + " runs list --json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  const auto list = nlohmann::json::parse(runs.out)["runs"];
  ASSERT_EQ(list.size(), 1u) << runs.out;
  EXPECT_EQ(list[0]["model"], "micro gemm");
  EXPECT_EQ(list[0]["status"], "ok");
}

TEST(MicroGemmCliTest, JsonOnStdoutAndNoStore) {
  const std::string db = temp_db("gemm-json");
  auto r = dlbench(std::string("--db ") + db + " " + kTinyGemm + " --json --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema"], "dlbench.micro.gemm/1");
  EXPECT_EQ(doc["wrong"], 0);
  EXPECT_GT(doc["checked"].get<int>(), 0);
  EXPECT_EQ(doc["rows"].size(), 4u);
  EXPECT_EQ(doc["summary"][0]["precision"], "fp32");
  EXPECT_GT(doc["summary"][0]["best_rate"].get<double>(), 0);
  EXPECT_EQ(r.err.find("stored"), std::string::npos) << r.err;
  auto runs = dlbench("--db " + db + " runs list --json");
  EXPECT_EQ(nlohmann::json::parse(runs.out)["runs"].size(), 0u) << runs.out;
}

TEST(MicroGemmCliTest, GpuOnlyPrecisionsAreSkippedOnTheCpu) {
  auto r = dlbench(
      "micro gemm --device cpu --precision fp64,int8 --shapes 16 --iters 1 "
      "--min-seconds 0 --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count_of(r.out, "not measured on CPUs"), 4) << r.out;  // rows and summary
}

TEST(MicroBandwidthCliTest, CpuTableIsCheckedAndStored) {
  const std::string db = temp_db("bandwidth");
  auto r = dlbench("--db " + db + " micro bandwidth --device cpu --size 1M --iters 2 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("copy "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("triad "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("theoretical: not known on CPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Wrong elements: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("stored as run 1"), std::string::npos) << r.err;
  auto runs = dlbench("--db " + db + " runs list --json");
  const auto list = nlohmann::json::parse(runs.out)["runs"];
  ASSERT_EQ(list.size(), 1u) << runs.out;
  EXPECT_EQ(list[0]["model"], "micro bandwidth");
}

TEST(MicroCliTest, BadFlagsAreOneLineUsageErrors) {
  for (const char* args :
       {"gemm --device cpu --precision fp99", "gemm --device cpu --shapes 12x",
        "gemm --device cpu --shapes 0", "gemm --device cpu --iters 0",
        "gemm --device cpu --workspace 1X", "gemm --device cpu --precision int8 --shapes 6",
        "gemm --device tpu", "gemm --device cpu --bogus", "bandwidth --device cpu --size 1K",
        "bandwidth --device cpu --size 3Q", "bandwidth --device cpu --iters 0",
        "transfer --min-bytes 2M --max-bytes 1M", "transfer --factor 1", "p2p --size 1X",
        "p2p --iters 0"}) {
    auto r = dlbench(std::string("micro ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("dlbench: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_LE(count_of(r.err, "\n"), 2) << r.err;  // the error and at most one hint
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
}

TEST(MicroCliTest, GpuBenchmarksWithoutAGpuSaySo) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU";
  for (const char* args : {"gemm --device cuda", "bandwidth --device cuda", "transfer"}) {
    auto r = dlbench(std::string("micro ") + args);
    // 3: no such device; 2: a build without CUDA.
    EXPECT_TRUE(r.exit_code == 3 || r.exit_code == 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--device cpu"), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  auto p2p = dlbench("micro p2p --no-store");
  EXPECT_EQ(p2p.exit_code, 0) << p2p.err;
  EXPECT_NE(p2p.out.find("p2p needs 2+ GPUs"), std::string::npos) << p2p.out;
}

TEST(MicroCliTest, TransferOnTheCpuIsAUsageError) {
  auto r = dlbench("micro transfer --device cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--device cuda"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dlbench
