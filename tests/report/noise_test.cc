// Noise warnings (bench/result/noise.h) on made-up inputs: each fires on its own input, at its
// boundary and not below it, and none on a clean run; a run in memory, its JSON and its stored
// record say the same; runs stored before warnings existed get them derived.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "bench/result/noise.h"
#include "bench/result/run_result.h"
#include "bench/store/run_record.h"
#include "bench/store/store.h"
#include "bench/telemetry/metric.h"
#include "tests/store/store_test_util.h"

namespace dlbench::result {
namespace {

using nlohmann::json;

// A run nothing is wrong with: many steps, steady, alone on its cores, clocks never held.
NoiseInputs clean() {
  NoiseInputs in;
  in.measured_steps = 20;
  in.step_cv = 0.01;
  in.process_cpu_percent = 195;
  in.cgroup_cpu_percent = 200;
  return in;
}

std::vector<std::string> codes(const std::vector<NoiseWarning>& warnings) {
  std::vector<std::string> out;
  for (const NoiseWarning& w : warnings) out.push_back(w.code);
  return out;
}

// A copy, not a pointer: the warnings are often a temporary.
std::optional<NoiseWarning> find(const std::vector<NoiseWarning>& warnings,
                                 const std::string& code) {
  for (const NoiseWarning& w : warnings)
    if (w.code == code) return w;
  return std::nullopt;
}

TEST(NoiseTest, CleanRunHasNoWarnings) {
  EXPECT_TRUE(noise_warnings(clean()).empty()) << warning_codes(noise_warnings(clean()));
  // Nothing measured: nothing to warn about, whatever else the run holds.
  NoiseInputs none = clean();
  none.measured_steps = 0;
  none.step_cv = 0.5;
  EXPECT_TRUE(noise_warnings(none).empty());
}

TEST(NoiseTest, HighCvAboveFivePercentWithTheFigure) {
  NoiseInputs in = clean();
  in.step_cv = kHighStepCv;  // "above": exactly the threshold is not
  EXPECT_EQ(find(noise_warnings(in), "high-cv"), std::nullopt);
  in.step_cv = 0.082;
  std::optional<NoiseWarning> w = find(noise_warnings(in), "high-cv");
  ASSERT_NE(w, std::nullopt);
  EXPECT_EQ(w->text, "step time varies 8.2 % (CV), above 5 %");
  in.step_cv = std::nan("");  // one step: unknown, not high
  EXPECT_EQ(find(noise_warnings(in), "high-cv"), std::nullopt);
}

TEST(NoiseTest, FewStepsBelowTen) {
  NoiseInputs in = clean();
  in.measured_steps = kFewSteps;
  EXPECT_EQ(find(noise_warnings(in), "few-steps"), std::nullopt);
  in.measured_steps = kFewSteps - 1;
  std::optional<NoiseWarning> w = find(noise_warnings(in), "few-steps");
  ASSERT_NE(w, std::nullopt);
  EXPECT_NE(w->text.find("only 9 measured steps, fewer than 10"), std::string::npos) << w->text;
  in.measured_steps = 1;
  EXPECT_NE(find(noise_warnings(in), "few-steps")->text.find("only 1 measured step,"),
            std::string::npos);
}

TEST(NoiseTest, LateSearchWhenMeasuredStepsChoseAlgorithms) {
  NoiseInputs in = clean();
  EXPECT_EQ(find(noise_warnings(in), "late-search"), std::nullopt);
  in.searched_shapes = 1;
  std::optional<NoiseWarning> w = find(noise_warnings(in), "late-search");
  ASSERT_NE(w, std::nullopt);
  EXPECT_NE(w->text.find("1 op shape's algorithms were chosen by measuring during the measured "
                         "steps"),
            std::string::npos)
      << w->text;
  in.searched_shapes = 53;
  EXPECT_NE(find(noise_warnings(in), "late-search")->text.find("53 op shapes' algorithms were"),
            std::string::npos);
  // From a stored document's metric and from a run in memory alike.
  json doc = {{"measured_steps", 20},
              {"metrics", {{{"tag", kSearchedShapesMetric}, {"value", 7}, {"unit", "shapes"}}}}};
  EXPECT_EQ(noise_inputs(doc).searched_shapes, 7);
  RunResult r;
  r.measured_steps = 20;
  add_metric(r, kSearchedShapesMetric, 2, "shapes", "");
  EXPECT_EQ(noise_inputs(r).searched_shapes, 2);
  EXPECT_EQ(noise_inputs(RunResult{}).searched_shapes, 0);
}

TEST(NoiseTest, CpuContentionWhenOthersInTheCgroupTookTheCores) {
  NoiseInputs in = clean();
  in.process_cpu_percent = 100;
  in.cgroup_cpu_percent = 200;
  std::optional<NoiseWarning> w = find(noise_warnings(in), "cpu-contention");
  ASSERT_NE(w, std::nullopt);
  EXPECT_EQ(w->text,
            "the process got 50.0 % of its cgroup's CPU (100 of 200 % of a core): other "
            "processes competed for the cores");
  // At the share's boundary: 75 % of the cgroup is not contention, just below it is.
  in.process_cpu_percent = 75;
  in.cgroup_cpu_percent = 100;
  EXPECT_EQ(find(noise_warnings(in), "cpu-contention"), std::nullopt);
  in.process_cpu_percent = 74.5;
  EXPECT_NE(find(noise_warnings(in), "cpu-contention"), std::nullopt);
  // A small share of a small total: the others' few percent of a core steal nothing.
  in.process_cpu_percent = 10;
  in.cgroup_cpu_percent = 10 + kContentionFloorPercent - 1;
  EXPECT_EQ(find(noise_warnings(in), "cpu-contention"), std::nullopt);
  in.cgroup_cpu_percent = 10 + kContentionFloorPercent;
  EXPECT_NE(find(noise_warnings(in), "cpu-contention"), std::nullopt);
  // No cgroup figure (cgroup v1): no claim either way.
  in.cgroup_cpu_percent = std::nan("");
  EXPECT_EQ(find(noise_warnings(in), "cpu-contention"), std::nullopt);
}

TEST(NoiseTest, GpuThrottledForAtLeastFivePercentOfTheWindow) {
  NoiseInputs in = clean();
  in.throttles = {{"power cap", kThrottledShare - 0.001}};
  EXPECT_EQ(find(noise_warnings(in), "gpu-throttled"), std::nullopt);
  in.throttles = {{"power cap", 0.4}, {"thermal (software)", kThrottledShare}};
  std::optional<NoiseWarning> w = find(noise_warnings(in), "gpu-throttled");
  ASSERT_NE(w, std::nullopt);
  EXPECT_EQ(w->text,
            "GPU clocks held down: power cap during 40.0 % of the measured phase, thermal "
            "(software) during 5.0 % of the measured phase");
  // Stored before shares were recorded: the flag alone says it happened.
  in.throttles = {{"power brake", std::nan("")}};
  w = find(noise_warnings(in), "gpu-throttled");
  ASSERT_NE(w, std::nullopt);
  EXPECT_NE(w->text.find("power brake at some point in the run"), std::string::npos) << w->text;
}

TEST(NoiseTest, RepeatsThatDisagreeBeyondFivePercent) {
  NoiseInputs in = clean();
  in.repeat_throughputs = {100, 102, 104};  // 4 % of the median
  EXPECT_EQ(find(noise_warnings(in), "repeat-spread"), std::nullopt);
  in.repeat_throughputs = {100, 103, 106};  // 6 %
  std::optional<NoiseWarning> w = find(noise_warnings(in), "repeat-spread");
  ASSERT_NE(w, std::nullopt);
  EXPECT_NE(w->text.find("between the 3 repeats"), std::string::npos) << w->text;
}

// A run document as the store keeps it, stored before warnings existed: its step statistics,
// process and cgroup CPU (window figure preferred) and clock-event shares give the same inputs.
TEST(NoiseTest, InputsFromAStoredDocument) {
  json doc = {{"measured_steps", 4},
              {"step_time_ms", {{"median", 10.0}, {"cv", 0.07}}},
              {"telemetry",
               {{"metrics",
                 {{"process.cpu", {{"mean", 80.0}}},
                  {"cgroup.cpu", {{"mean", 150.0}, {"window", 190.0}}},
                  {"gpu0.clock_events",
                   {{"flags", {"sw_power_cap", "gpu_idle"}},
                    {"share_percent", {{"sw_power_cap", 12.5}, {"gpu_idle", 90.0}}}}},
                  {"gpu1.clock_events",
                   {{"flags", {"sw_power_cap"}}, {"share_percent", json::object()}}}}}}}};
  const NoiseInputs in = noise_inputs(doc);
  EXPECT_EQ(in.measured_steps, 4);
  EXPECT_DOUBLE_EQ(in.step_cv, 0.07);
  EXPECT_DOUBLE_EQ(in.process_cpu_percent, 80.0);
  EXPECT_DOUBLE_EQ(in.cgroup_cpu_percent, 190.0);
  ASSERT_EQ(in.throttles.size(), 1u) << "gpu_idle is not throttling";
  EXPECT_EQ(in.throttles[0].reason, "power cap");
  EXPECT_DOUBLE_EQ(in.throttles[0].share, 0.125);  // the largest over the GPUs
  EXPECT_EQ(codes(stored_noise_warnings(doc)),
            (std::vector<std::string>{"high-cv", "cpu-contention", "gpu-throttled", "few-steps"}));
  // Stored with warnings: those, as they were said then.
  doc["warnings"] = to_json(std::vector<NoiseWarning>{{"high-cv", "as stored"}});
  EXPECT_EQ(stored_noise_warnings(doc), (std::vector<NoiseWarning>{{"high-cv", "as stored"}}));
  // Nothing stored (a failed run): nothing.
  EXPECT_TRUE(stored_noise_warnings(json::object()).empty());
}

// A run in memory with a telemetry summary: the terminal's warnings, its JSON's and what the
// store gives back are the same.
RunResult contended_run(double throughput) {
  RunResult r;
  r.config.steps = 3;
  r.measured_steps = 3;
  r.measured_seconds = 3 / throughput;
  r.throughput = throughput;
  r.step = summarize_steps({10, 10.5, 11});
  telemetry::Summary s;
  auto cpu = [](const std::string& name, double mean) {
    telemetry::MetricSummary m;
    m.spec = telemetry::counter_metric(name, name, "%", "s", 100);
    m.samples = 3;
    m.mean = Reported<double>::of(mean);
    return m;
  };
  s.metrics = {cpu("process.cpu", 90), cpu("cgroup.cpu", 200)};
  r.telemetry = telemetry::Recording{s, {}, {}, {}, {}};
  r.environment = {{"host", {{"hostname", "box"}}}};
  add_timing_metrics(r, "their wall time", "none");
  return r;
}

TEST(NoiseTest, TerminalJsonAndStoreSayTheSame) {
  const RunResult r = contended_run(100);
  const std::vector<NoiseWarning> said = noise_warnings(r);
  EXPECT_EQ(codes(said), (std::vector<std::string>{"cpu-contention", "few-steps"}));
  const json doc = to_json(r);
  EXPECT_EQ(stored_noise_warnings(doc), said);
  EXPECT_EQ(doc["warnings"], to_json(said));
  auto db = store::open_store(testing::temp_folder("noise-store") + "/r.db");
  const std::int64_t id = db->save_run(store::run_record(r));
  const std::optional<store::RunRecord> back = db->get_run(id);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(stored_noise_warnings(back->result), said);
  // Derived again from what the store holds, as for a run stored before warnings existed.
  json old = back->result;
  old.erase("warnings");
  EXPECT_EQ(stored_noise_warnings(old), said);
}

// The sampler's clock-event summary of a GPU, as the run holds it in memory: its bits' shares
// reach the warning through the same JSON the store keeps.
TEST(NoiseTest, ClockEventSummaryOfARunInMemory) {
  RunResult r = contended_run(100);
  telemetry::MetricSummary events;
  events.spec = telemetry::bitmask_metric("gpu0.clock_events", "clock events",
                                          {"gpu_idle", "applications_clocks", "sw_power_cap"});
  events.samples = 10;
  events.mask = Reported<std::uint64_t>::of(0b101);
  events.bit_share = {0.5, 0, 0.25};
  r.telemetry->summary.metrics.push_back(events);
  const std::optional<NoiseWarning> w = find(noise_warnings(r), "gpu-throttled");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->text, "GPU clocks held down: power cap during 25.0 % of the measured phase");
  EXPECT_EQ(stored_noise_warnings(to_json(r)), noise_warnings(r));
}

TEST(NoiseTest, RepeatsKeepEveryThroughputAndTheOthersWarnings) {
  std::vector<RunResult> runs = {contended_run(10), contended_run(30), contended_run(20)};
  runs[1].step = summarize_steps({10, 20, 30});  // only repeat 2 is jittery
  const RunResult r = combine_repeats(runs, 3);
  ASSERT_TRUE(r.repeats.has_value());
  EXPECT_DOUBLE_EQ(r.throughput, 20);  // the median repeat's, which the result shows
  EXPECT_EQ(r.repeats->shown, 2);
  const std::vector<NoiseWarning> w = noise_warnings(r);
  EXPECT_EQ(codes(w),
            (std::vector<std::string>{"cpu-contention", "few-steps", "high-cv", "repeat-spread"}));
  EXPECT_EQ(find(w, "high-cv")->text.rfind("repeat 2: step time varies", 0), 0u)
      << find(w, "high-cv")->text;
  const json doc = to_json(r);
  EXPECT_EQ(doc["repeats"]["throughputs_samples_per_s"], json({10.0, 30.0, 20.0}));
  EXPECT_EQ(doc["repeats"]["shown"], 3);
  EXPECT_EQ(repeat_throughputs(doc), (std::vector<double>{10, 30, 20}));
  EXPECT_EQ(stored_noise_warnings(doc), w);
  bool counted = false;
  for (const Metric& m : r.metrics) counted |= m.tag == "throughput/repeats" && m.value == 3;
  EXPECT_TRUE(counted);
}

}  // namespace
}  // namespace dlbench::result
