// A data-parallel run's per-replica step times (bench/result/replica_steps.h): which steps were
// slow, which replica started each last, what the terminal says, and the JSON a run writes.
#include "bench/result/replica_steps.h"

#include <gtest/gtest.h>

#include "bench/result/run_result.h"

namespace dlbench::result {
namespace {

// Three replicas, four steps of about 10 ms. Step 3 took 15 ms everywhere: replica 2 started
// it 4.5 ms after the others, so they waited for it in the all-reduce.
std::vector<ReplicaSteps> three_replicas() {
  return {
      {{0.0, 10.1, 20.2, 35.3}, {10.0, 10.0, 15.0, 10.0}},
      {{0.1, 10.2, 20.3, 35.3}, {10.0, 10.1, 14.9, 10.0}},
      {{0.2, 10.1, 24.8, 35.4}, {9.9, 10.0, 10.6, 10.1}},
  };
}

TEST(ReplicaStepsTest, ASlowStepNamesTheReplicaThatStartedItLast) {
  const Stragglers s = find_stragglers(three_replicas());
  EXPECT_EQ(s.steps, 4);
  EXPECT_DOUBLE_EQ(s.median_ms, 10.0);
  ASSERT_EQ(s.slow.size(), 1u);
  EXPECT_EQ(s.slow[0].step, 2);
  EXPECT_DOUBLE_EQ(s.slow[0].ms, 15.0);
  EXPECT_EQ(s.slow[0].late_replica, 2);
  EXPECT_NEAR(s.slow[0].late_by_ms, 4.6, 1e-9);
  EXPECT_EQ(s.started_last, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(stragglers_text(s),
            "1 of 4 steps over 1.10x the median step (10.0 ms): step 3 15.0 ms (replica 2 "
            "started it 4.6 ms after the first); replica 2 started 3 of the 4 steps last");
}

TEST(ReplicaStepsTest, TelemetrySamplesAreCountedInTheStepsTheyFellIn) {
  // Steps span [0, 10.2), [10.1, 20.3), [20.2, 35.3), [35.3, 45.5): reads in step 3 (the slow
  // one) and step 4, and one in the gap before the first step.
  const std::vector<Span> reads = {{-3.0, -2.0}, {24.0, 25.0}, {36.0, 36.5}};
  const Stragglers s = find_stragglers(three_replicas(), kSlowStepRatio, reads);
  EXPECT_EQ(s.slow_with_sample, 1);
  EXPECT_EQ(s.steps_with_sample, 2);
  EXPECT_NE(
      stragglers_text(s).find("; a telemetry sample fell in 1 of the 1 slow steps (in 2 of all 4)"),
      std::string::npos)
      << stragglers_text(s);
  // Without telemetry nothing is said of it.
  EXPECT_EQ(find_stragglers(three_replicas()).slow_with_sample, -1);
  EXPECT_EQ(stragglers_text(find_stragglers(three_replicas())).find("telemetry"),
            std::string::npos);
}

TEST(ReplicaStepsTest, ARunsSamplesArePutOnTheStepsClock) {
  // The steps' origin at 5,000 ms of CLOCK_MONOTONIC; a sample ticked at 5,024 ms and read
  // until 5,024.5 ms fell in step 3, one that ticked at 5,050 ms in none.
  const double origin_ms = 5000.0;
  telemetry::Recording recording;
  telemetry::Sample in_step_3;
  in_step_3.tick.monotonic_ns = 5'024'000'000;
  in_step_3.read_ns = {5'024'200'000, 5'024'500'000};
  telemetry::Sample after;
  after.tick.monotonic_ns = 5'050'000'000;
  recording.samples = {in_step_3, after};
  const Stragglers s = run_stragglers(three_replicas(), origin_ms, &recording);
  EXPECT_EQ(s.slow_with_sample, 1);
  EXPECT_EQ(s.steps_with_sample, 1);
  EXPECT_EQ(run_stragglers(three_replicas(), origin_ms, nullptr).steps_with_sample, -1);
}

TEST(ReplicaStepsTest, EvenStepsHaveNoStragglers) {
  std::vector<ReplicaSteps> even = three_replicas();
  even[0].ms[2] = even[1].ms[2] = 10.5;
  const Stragglers s = find_stragglers(even);
  EXPECT_TRUE(s.slow.empty());
  EXPECT_EQ(stragglers_text(s),
            "none of 4 steps over 1.10x the median step (10.0 ms) on any replica");
}

TEST(ReplicaStepsTest, ReplicasAreReadUpToTheShortestAndListsAreCut) {
  std::vector<ReplicaSteps> r = three_replicas();
  r[1].ms.pop_back();
  EXPECT_EQ(find_stragglers(r).steps, 3);
  EXPECT_EQ(find_stragglers({}).steps, 0);
  // Every step slow against a ratio under 1: the list stops at `listed` with "...".
  const std::string text = stragglers_text(find_stragglers(three_replicas(), 0.5), 2);
  EXPECT_NE(text.find("4 of 4 steps over 0.50x"), std::string::npos) << text;
  EXPECT_NE(text.find("; ...; replica"), std::string::npos) << text;
}

TEST(ReplicaStepsTest, TheRunsJsonHoldsEachReplicasSteps) {
  RunResult r;
  r.config.model = "resnet50";
  r.config.batch = 8;
  DataParallel dp;
  dp.replicas = 3;
  dp.replica_steps = three_replicas();
  dp.replica_steps_origin_ms = 5000.0;
  r.data_parallel = dp;
  const nlohmann::json doc = to_json(r);
  const nlohmann::json& steps = doc["data_parallel"]["replica_steps"];
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[2]["start_ms"][2].get<double>(), 24.8);
  EXPECT_EQ(steps[1]["ms"][2].get<double>(), 14.9);
  EXPECT_EQ(doc["data_parallel"]["replica_steps_origin_ms"].get<double>(), 5000.0);
  // Read back as written.
  const std::vector<ReplicaSteps> back = replica_steps_from_json(doc["data_parallel"]);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].start_ms, three_replicas()[2].start_ms);
  EXPECT_EQ(back[1].ms, three_replicas()[1].ms);
}

TEST(ReplicaStepsTest, ACorruptStoredSeriesReadsAsNone) {
  using nlohmann::json;
  EXPECT_TRUE(replica_steps_from_json(json()).empty());
  EXPECT_TRUE(replica_steps_from_json(json::object()).empty());
  EXPECT_TRUE(replica_steps_from_json({{"replica_steps", "many"}}).empty());
  const json good = {{"start_ms", {0.0, 10.0}}, {"ms", {10.0, 10.0}}};
  EXPECT_EQ(replica_steps_from_json({{"replica_steps", {good, good}}}).size(), 2u);
  for (const json& bad :
       {json{{"start_ms", {0.0, "ten"}}, {"ms", {10.0, 10.0}}},
        json{{"start_ms", {0.0}}, {"ms", {10.0, 10.0}}}, json{{"ms", {10.0, 10.0}}}, json(3)})
    EXPECT_TRUE(replica_steps_from_json({{"replica_steps", {good, bad}}}).empty()) << bad;
}

}  // namespace
}  // namespace dlbench::result
