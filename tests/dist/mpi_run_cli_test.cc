// `mpirun -np 2 dlbench run ... --device cpu --dist mpi` end to end: rank 0 alone prints and
// stores, the replicas stay identical, and mistakes get one-line usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::run_command;

// Open MPI refuses root (CI containers) unless told it is on purpose, and CI has 2 cores.
const std::string kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe ";
const std::string kRun = std::string(DLBENCH_BINARY) +
                         " run resnet50 --device cpu --dist mpi --input 32 --batch 8 --steps 3 "
                         "--warmup 1 --no-telemetry --no-store";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MpiRunCliTest, TwoRanksTrainAsOneJobAndOnlyRankZeroReports) {
  auto r = run_command(kMpirun + kRun);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "Throughput"), 1u) << r.out;
  EXPECT_NE(r.out.find("2 replicas"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("global batch 16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("identical weights after the last step"), std::string::npos) << r.out;
  // Two ranks oversubscribing CI's two cores may or may not have a slow step; the row is there.
  EXPECT_NE(r.out.find("Slow steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" the median step ("), std::string::npos) << r.out;
}

TEST(MpiRunCliTest, JsonRecordsTheReplicas) {
  auto r = run_command(kMpirun + kRun + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);  // one document: rank 1 wrote nothing
  EXPECT_EQ(doc["data_parallel"]["replicas"], 2);
  EXPECT_EQ(doc["data_parallel"]["global_batch"], 16);
  EXPECT_EQ(doc["data_parallel"]["replicas_identical"], true);
  EXPECT_EQ(doc["data_parallel"]["replica_seconds"].size(), 2u);
  // Each rank's three measured steps, their starts on the node's one clock: the first start is
  // 0 and the ranks started each step within a step's time of each other.
  const auto& steps = doc["data_parallel"]["replica_steps"];
  ASSERT_EQ(steps.size(), 2u);
  double first = 1e300;
  for (const auto& rank : steps) {
    ASSERT_EQ(rank["ms"].size(), 3u);
    ASSERT_EQ(rank["start_ms"].size(), 3u);
    first = std::min(first, rank["start_ms"][0].get<double>());
    for (int i = 0; i < 3; ++i) EXPECT_GT(rank["ms"][i].get<double>(), 0.0);
  }
  EXPECT_EQ(first, 0.0);
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(
        std::abs(steps[0]["start_ms"][i].get<double>() - steps[1]["start_ms"][i].get<double>()),
        steps[0]["ms"][i].get<double>() + steps[1]["ms"][i].get<double>())
        << "step " << i;
  EXPECT_EQ(doc["config"]["batch"], 8);
}

// With --seconds the ranks agree once on how many steps fill the time; they must all run the
// same number (each step is a collective), so the job ends and the replicas stay identical.
TEST(MpiRunCliTest, SecondsBoundRunsAgreeOnTheStepCount) {
  auto r = run_command(kMpirun + std::string(DLBENCH_BINARY) +
                       " run resnet50 --device cpu --dist mpi --input 32 --batch 4 --warmup 1 "
                       "--seconds 2 --no-telemetry --no-store --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_GE(doc["measured_steps"].get<int>(), 1);
  EXPECT_EQ(doc["data_parallel"]["replicas_identical"], true);
}

TEST(MpiRunCliTest, DistMpiWithoutALauncherIsAUsageError) {
  auto r = run_command(std::string(DLBENCH_BINARY) +
                       " run resnet50 --device cpu --dist mpi --input 32 --no-store");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("mpirun"), std::string::npos) << r.err;
}

TEST(MpiRunCliTest, GpusOnACpuIsRefused) {
  auto r = run_command(std::string(DLBENCH_BINARY) + " run resnet50 --device cpu --gpus 2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--gpus"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dlbench
