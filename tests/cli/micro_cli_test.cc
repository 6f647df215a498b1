// dlbench micro allreduce end to end: bad input, and two CPU ranks under mpirun (skipped where
// mpirun is missing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::CommandResult;
using testing::dlbench;
using testing::run_command;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The table's data rows: every line that is not a '#' comment, split into fields.
std::vector<std::vector<std::string>> rows_of(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

bool have_mpirun() {
  return run_command("command -v mpirun").exit_code == 0;
}

// Two CPU ranks on this machine, whatever its core count; Open MPI refuses root without a flag.
CommandResult mpirun2(const std::string& args) {
  std::string command = "timeout 300 mpirun -np 2 --oversubscribe";
  if (getuid() == 0)
    command = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + command +
              " --allow-run-as-root";
  return run_command(command + " " + DLBENCH_BINARY + " " + args);
}

TEST(MicroCliTest, BadSizesAreOneLineUsageErrors) {
  for (const char* args : {"--min-bytes 2M --max-bytes 1M", "--max-bytes 1X", "--factor 1",
                           "--iters 0", "--dtype f64", "--dist tcp"}) {
    auto r = dlbench(std::string("micro allreduce --device cpu ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("dlbench: ", 0), 0u) << r.err;
    EXPECT_LE(count_of(r.err, "\n"), 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(MicroCliTest, OneCpuRankSaysHowToStartTwo) {
  auto r = dlbench("micro allreduce --device cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("2+ MPI ranks"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mpirun -np 2"), std::string::npos) << r.err;
}

TEST(MicroCliTest, MoreGpusThanTheMachineHasIsAResourceError) {
  auto r = dlbench("micro allreduce --gpus 1000");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--gpus 1000"), std::string::npos) << r.err;
}

TEST(MicroCliTest, GpusOnTheCpuIsAUsageError) {
  auto r = dlbench("micro allreduce --gpus 2 --device cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(MicroCliTest, DistMpiWithoutALauncherIsAUsageError) {
  auto r = dlbench("micro allreduce --device cpu --dist mpi");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("launcher"), std::string::npos) << r.err;
}

TEST(MicroCliTest, TwoCpuRanksUnderMpirunSumCorrectlyAndPrintOneTable) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  auto r = mpirun2("micro allreduce --device cpu --dist mpi --max-bytes 1M");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count_of(r.out, "# dlbench micro allreduce"), 1) << r.out;
  EXPECT_EQ(count_of(r.out, "#wrong"), 1) << r.out;
  EXPECT_NE(r.out.find("over 2 ranks (mpi), mpi ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# devices by rank: cpu cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Wrong elements: 0"), std::string::npos) << r.out;
  const auto rows = rows_of(r.out);
  ASSERT_EQ(rows.size(), 18u) << r.out;  // 8 B .. 1 MiB
  std::int64_t bytes = 8;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 7u) << r.out;
    EXPECT_EQ(std::stoll(row[0]), bytes);
    EXPECT_EQ(std::stoll(row[1]), bytes / 4);
    EXPECT_EQ(row[2], "f32");
    EXPECT_GT(std::stod(row[3]), 0);
    // Two ranks: busbw = algbw * 2(n-1)/n = algbw.
    EXPECT_EQ(row[4], row[5]);
    EXPECT_EQ(row[6], "0") << "wrong elements at " << bytes;
    bytes *= 2;
  }
}

TEST(MicroCliTest, TwoCpuRanksWriteJsonOnce) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  auto r = mpirun2(
      "micro allreduce --device cpu --dist mpi --min-bytes 1K --max-bytes 64K "
      "--factor 4 --iters 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);  // one document: rank 0's
  EXPECT_EQ(doc["benchmark"], "allreduce");
  EXPECT_EQ(doc["ranks"], 2);
  EXPECT_EQ(doc["launch"], "mpi");
  EXPECT_EQ(doc["wrong"], 0);
  ASSERT_EQ(doc["results"].size(), 4u);  // 1, 4, 16, 64 KiB
  EXPECT_EQ(doc["results"][3]["bytes"], 64 << 10);
}

// nccl-tests' -b/-e/-f/-n/-w spell the same sizes; the average line names what it averages
// (nccl-tests' "Avg bus bandwidth" is over every size) and the large sizes' mean is named apart.
TEST(MicroCliTest, NcclTestsSpellingsAndTheAverageSaysWhichSizes) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  auto r = mpirun2("micro allreduce --device cpu --dist mpi -b 1K -e 64K -f 4 -n 2 -w 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(rows_of(r.out).size(), 4u) << r.out;  // 1, 4, 16, 64 KiB
  EXPECT_NE(r.out.find("# 2 timed all-reduces per size after 1 warm-up"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(mean over all 4 sizes, as nccl-tests averages)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# Large-size bus bandwidth: no size reached 64 MiB"), std::string::npos)
      << r.out;
}

TEST(MicroCliTest, UsageErrorsUnderMpirunArePrintedOnce) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  auto r = mpirun2("micro allreduce --device cpu --dist mpi --min-bytes 2M --max-bytes 1M");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_of(r.err, "dlbench: --min-bytes"), 1) << r.err;
}

}  // namespace
}  // namespace dlbench
