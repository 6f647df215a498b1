// Refused and failed commands leave no trace (no database created, no output file truncated),
// and a seeded fuzzer of command lines finds no crash, hang or internal error (issue 15).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

namespace fs = std::filesystem;
using testing::dlbench;

using testing::read_file;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Every file of a folder, so a test can say nothing was added (no temporary file left over).
std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(RefusedCliTest, BadFlagsCreateNoDatabase) {
  const std::string dir = testing::temp_folder("refused-db");
  for (const char* args :
       {"run vgg16 --device cpu --input 32 --batch 0", "run vgg16 --device cpu --input 33",
        "run vgg17 --device cpu", "run vgg16 --device cpu --input 32 --seconds inf",
        "run vgg16 --device cpu --input 32 --precision fp8"}) {
    auto r = dlbench("--db " + dir + "/new.db " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir + "/new.db")) << args << " created the database";
  }
  EXPECT_TRUE(listing(dir).empty());
}

TEST(RefusedCliTest, FailedReportLeavesTheExistingFileAsItWas) {
  const std::string dir = testing::temp_folder("refused-report");
  const std::string keep = dir + "/keep.html";
  write_file(keep, "an earlier report\n");
  // A database that cannot be opened (exit 3), and one with nothing to report (exit 2).
  auto missing = dlbench("--db " + dir + "/no/such/folder.db report --out " + keep);
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  auto empty = dlbench("--db " + dir + "/empty.db report --last 1 --out " + keep);
  EXPECT_NE(empty.exit_code, 0) << empty.err;
  EXPECT_LT(empty.exit_code, 128) << empty.err;
  EXPECT_EQ(read_file(keep), "an earlier report\n");
  std::vector<std::string> files = listing(dir);
  files.erase(std::remove(files.begin(), files.end(), "empty.db"), files.end());
  EXPECT_EQ(files, std::vector<std::string>{"keep.html"}) << "a temporary file was left";
}

TEST(RefusedCliTest, FailedRunLeavesTheExistingJsonAsItWas) {
  const std::string dir = testing::temp_folder("refused-json");
  const std::string keep = dir + "/keep.json";
  write_file(keep, "{\"earlier\": true}\n");
  // Valid flags, but a batch that cannot fit in memory: the run fails after the file was opened.
  auto r = dlbench(
      "run vgg16 --device cpu --input 32 --mode infer --batch 16777216 --no-store "
      "--no-telemetry --json " +
      keep);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(read_file(keep), "{\"earlier\": true}\n");
  EXPECT_EQ(listing(dir), std::vector<std::string>{"keep.json"}) << "a temporary file was left";
  // A run that succeeds replaces it.
  auto ok = dlbench(
      "run vgg16 --device cpu --input 32 --mode infer --batch 1 --steps 1 "
      "--warmup 0 --no-store --no-telemetry --json " +
      keep);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(read_file(keep).find("\"schema\": \"dlbench.run/1\""), std::string::npos);
  EXPECT_EQ(listing(dir), std::vector<std::string>{"keep.json"});
}

// Found by the fuzzer (seed 7): an id beyond 64 bits was an internal error (std::stoll).
TEST(RefusedCliTest, RunIdBeyondSixtyFourBitsIsAUsageError) {
  const std::string dir = testing::temp_folder("refused-id");
  auto r = dlbench("--db " + dir + "/x.db compare --as runs 18446744073709551615 1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'18446744073709551615' is not a run id"), std::string::npos) << r.err;
}

// The command-line fuzzer: a valid tiny command with one or two values replaced by hostile
// ones. No case may crash (exit >= 128), hang (timeout's 124) or report an internal error
// (exit 1). DLBENCH_FUZZ_SEED and DLBENCH_FUZZ_CASES change the seed and the count.
TEST(RefusedCliTest, FuzzedCommandLinesNeverCrashHangOrFailInternally) {
  const char* seed_text = std::getenv("DLBENCH_FUZZ_SEED");
  const char* count_text = std::getenv("DLBENCH_FUZZ_CASES");
  const unsigned seed = seed_text ? unsigned(std::strtoul(seed_text, nullptr, 10)) : 15u;
  const int cases = count_text ? std::atoi(count_text) : 150;
  std::mt19937 rng(seed);
  auto pick = [&rng](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  };
  const std::string dir = testing::temp_folder("fuzz-cli");
  const std::vector<std::string> hostile = {"''",
                                            "0",
                                            "-1",
                                            "-0",
                                            "1e309",
                                            "-1e309",
                                            "inf",
                                            "-inf",
                                            "nan",
                                            "NaN",
                                            "1e-320",
                                            "9223372036854775807",
                                            "9223372036854775808",
                                            "18446744073709551615",
                                            "99999999999999999999999",
                                            "4294967297",
                                            "2147483648",
                                            "0x10",
                                            "1.5",
                                            " 7",
                                            "7 ",
                                            "--",
                                            "-",
                                            "=",
                                            "cuda:99999999999",
                                            "cuda:-1",
                                            "cpu,cpu",
                                            "$'\\xff\\xfe'",
                                            "'caf\xc3\xa9'",
                                            "'\xe9t\xe9'",
                                            "'<script>'",
                                            "'a b'",
                                            "'%s%n'",
                                            "'../../etc/passwd'",
                                            "/",
                                            "/dev/null",
                                            "'postgresql://u:pw@[::1/db'",
                                            "'host=x password=pw'",
                                            std::string(3000, 'a')};
  const std::vector<std::string> flags = {
      "--batch",  "--input",     "--steps", "--warmup",         "--seconds",
      "--lr",     "--momentum",  "--seed",  "--bucket-mb",      "--interval",
      "--device", "--precision", "--mode",  "--profile-layers", "--framework",
      "--gpus",   "--dist",      "--json",  "--class-weights"};
  const std::string base = "--db " + dir +
                           "/fuzz.db run vgg16 --device cpu --input 32 "
                           "--mode infer --batch 1 --steps 1 --warmup 0 --no-telemetry";
  const std::vector<std::string> other_commands = {"runs list",
                                                   "runs show",
                                                   "runs delete",
                                                   "runs export --format",
                                                   "report --last",
                                                   "report --runs",
                                                   "report --format",
                                                   "compare",
                                                   "compare --as runs 1",
                                                   "suite",
                                                   "info --json",
                                                   "micro allreduce --device cpu --max-bytes",
                                                   "micro allreduce --dtype",
                                                   "micro allreduce --gpus",
                                                   "scale vgg16 --gpus",
                                                   "monitor --interval"};
  int failures = 0;
  for (int i = 0; i < cases && failures < 5; ++i) {
    std::string args;
    if (i % 4 == 3) {
      args = "--db " + dir + "/fuzz.db " + pick(other_commands) + " " + pick(hostile);
    } else {
      args = base;
      const int n = 1 + int(rng() % 2);
      for (int k = 0; k < n; ++k) args += " " + pick(flags) + " " + pick(hostile);
    }
    auto r = testing::run_command("cd " + dir + " && timeout 60 " DLBENCH_BINARY " " + args +
                                  " </dev/null");
    const bool bad = r.exit_code == 1 || r.exit_code >= 124 ||
                     r.err.find("internal error") != std::string::npos ||
                     r.err.find("unexpected:") != std::string::npos;
    if (bad) ++failures;
    EXPECT_FALSE(bad) << "case " << i << " (seed " << seed << "): dlbench " << args << "\nexit "
                      << r.exit_code << "\n"
                      << r.err;
  }
}

}  // namespace
}  // namespace dlbench
