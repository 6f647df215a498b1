// A run's efficiency (issue 19): the MFU arithmetic and the precision each run is measured
// against, the newest ok micro gemm of the same machine giving the peak (never another
// machine's), and samples per joule and mean power from a made-up telemetry summary.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench/micro/micro_record.h"
#include "bench/result/efficiency.h"
#include "bench/store/measured_peak.h"
#include "bench/store/run_mfu.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

const result::Metric* find(const result::RunResult& r, const std::string& tag) {
  for (const result::Metric& m : r.metrics)
    if (m.tag == tag) return &m;
  return nullptr;
}

TEST(MfuTest, EachRunPrecisionIsMeasuredAgainstItsOwnProduct) {
  EXPECT_EQ(result::gemm_precision(Precision::kFp32), "fp32");  // strict against strict
  EXPECT_EQ(result::gemm_precision(Precision::kTf32), "tf32");
  EXPECT_EQ(result::gemm_precision(Precision::kFp16), "fp16");
  EXPECT_EQ(result::gemm_precision(Precision::kBf16), "bf16");
}

TEST(MfuTest, AchievedOverPeakAndNoNumberWithoutAPeak) {
  EXPECT_DOUBLE_EQ(result::model_flops_utilization(410e12, 1000e12), 0.41);
  EXPECT_DOUBLE_EQ(result::model_flops_utilization(3.6e9, 1.2e10), 0.3);
  EXPECT_TRUE(std::isnan(result::model_flops_utilization(1e9, 0)));
  EXPECT_TRUE(std::isnan(result::model_flops_utilization(1e9, -1)));
  EXPECT_TRUE(std::isnan(result::model_flops_utilization(NAN, 1e12)));
}

telemetry::MetricSummary energy_counter(const std::string& name, double joules, double watts) {
  telemetry::MetricSummary m;
  m.spec = telemetry::counter_metric(name, "energy", "W", "J", 1.0);
  m.total = Reported<double>::of(joules);
  m.mean = Reported<double>::of(watts);
  return m;
}

TEST(EnergyTest, SamplesPerJouleAndMeanPowerOverEveryGpu) {
  telemetry::Summary t;
  t.duration_s = 10;
  t.metrics.push_back(energy_counter("gpu0.energy", 3000, 300));
  t.metrics.push_back(energy_counter("gpu1.energy", 1000, 100));
  telemetry::MetricSummary power;  // a level, not the counter: never summed as energy
  power.spec = telemetry::level_metric("gpu0.power", "board power", "W");
  power.mean = Reported<double>::of(999);
  t.metrics.push_back(power);
  const auto e = result::energy_use(t, 8000);
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->joules, 4000);
  EXPECT_DOUBLE_EQ(e->samples_per_joule, 2.0);
  EXPECT_DOUBLE_EQ(e->mean_power_w, 400);

  // No energy counter (a CPU run), or nothing processed: no figure at all.
  telemetry::Summary cpu;
  cpu.metrics.push_back(power);
  EXPECT_FALSE(result::energy_use(cpu, 8000));
  EXPECT_FALSE(result::energy_use(t, 0));
}

TEST(EnergyTest, MetricsAreAddedOnlyWhereTheCountersWereSampled) {
  result::RunResult r;
  r.throughput = 500;
  r.measured_seconds = 4;  // 2000 samples
  result::add_energy_metrics(r);
  EXPECT_EQ(find(r, "energy/samples_per_joule"), nullptr);  // no telemetry
  r.telemetry.emplace();
  r.telemetry->summary.duration_s = 4;
  r.telemetry->summary.metrics.push_back(energy_counter("gpu0.energy", 1000, 250));
  result::add_energy_metrics(r);
  ASSERT_NE(find(r, "energy/samples_per_joule"), nullptr);
  EXPECT_DOUBLE_EQ(find(r, "energy/samples_per_joule")->value, 2.0);
  EXPECT_EQ(find(r, "energy/samples_per_joule")->unit, "samples/J");
  EXPECT_DOUBLE_EQ(find(r, "energy/joules_per_sample")->value, 0.5);
  EXPECT_DOUBLE_EQ(find(r, "power/mean_w")->value, 250);

  // Half the samples processed where the counters were read (one node of an MPI job over two):
  // the energy per sample is that node's energy over its own samples.
  result::RunResult half = r;
  half.metrics.clear();
  result::add_energy_metrics(half, 0.5);
  EXPECT_DOUBLE_EQ(find(half, "energy/samples_per_joule")->value, 1.0);
  EXPECT_DOUBLE_EQ(find(half, "power/mean_w")->value, 250);
}

// The peak comes from the newest ok micro gemm of the run's own machine and device.
TEST(RunMfuTest, TheNewestOkGemmOfTheSameMachineGivesThePeakAndAnotherMachinesNever) {
  const std::string folder = testing::temp_folder("run-mfu");
  auto db = store::open_store(folder + "/results.db");
  const nlohmann::json here = testing::sample_run().machine.environment;
  nlohmann::json elsewhere = here;
  elsewhere["host"]["hostname"] = "other-box";
  auto gemm = [&](double fp16_tflops, const nlohmann::json& env, std::int64_t wrong) {
    micro::MicroRecordInput in{"gemm",
                               "cuda:0",
                               "fp16",
                               {{"config", {{"iters", 20}}}},
                               {{store::gemm_best_tag("fp16"), fp16_tflops, "TFLOP/s", "4096^3"}},
                               env,
                               wrong};
    return db->save_run(micro::micro_record(in));
  };
  result::RunResult run;
  run.config.precision = Precision::kFp16;
  run.config.launch.device = Device{DeviceType::kCuda, 0};
  run.environment = here;
  run.measured_steps = 10;
  run.flops_per_sample = 1e9;
  run.throughput = 200'000;  // 200 TFLOP/s achieved

  gemm(100, elsewhere, 0);  // another machine's peak is never used
  store::RunMfu none = store::add_mfu_metric(run, *db);
  EXPECT_FALSE(none.peak);
  EXPECT_EQ(none.precision, "fp16");
  EXPECT_EQ(find(run, "compute/mfu"), nullptr);

  gemm(400, here, 0);
  const std::int64_t newest = gemm(500, here, 0);
  gemm(2000, here, 7);  // wrong elements: failed, never a peak
  gemm(100, elsewhere, 0);
  store::RunMfu mfu = store::add_mfu_metric(run, *db);
  ASSERT_TRUE(mfu.peak);
  EXPECT_EQ(mfu.peak->run_id, newest);
  EXPECT_DOUBLE_EQ(mfu.mfu, 0.4);
  const result::Metric* m = find(run, "compute/mfu");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(m->value, 0.4);
  EXPECT_EQ(m->unit, "ratio");
  EXPECT_NE(m->description.find("micro gemm run " + std::to_string(newest)), std::string::npos)
      << m->description;
  EXPECT_NE(m->description.find("fp16 peak"), std::string::npos) << m->description;

  // bf16 was never measured: no peak, no metric.
  result::RunResult bf16 = run;
  bf16.metrics.clear();
  bf16.config.precision = Precision::kBf16;
  EXPECT_FALSE(store::add_mfu_metric(bf16, *db).peak);
  EXPECT_EQ(find(bf16, "compute/mfu"), nullptr);
}

TEST(MeasuredBandwidthTest, TheFastestTestOfTheNewestOkBandwidthRun) {
  const std::string folder = testing::temp_folder("measured-bandwidth");
  auto db = store::open_store(folder + "/results.db");
  const nlohmann::json env = testing::sample_run().machine.environment;
  EXPECT_FALSE(store::newest_measured_bandwidth(*db, "box", "cpu"));
  micro::MicroRecordInput in{
      "bandwidth",
      "cpu",
      "fp32",
      {{"config", {{"iters", 2}}}},
      {{"bandwidth/copy/best", 20, "GB/s", "copy"}, {"bandwidth/triad/best", 24, "GB/s", "triad"}},
      env,
      0};
  const std::int64_t id = db->save_run(micro::micro_record(in));
  const auto b = store::newest_measured_bandwidth(*db, "box", "cpu");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->value, 24);
  EXPECT_EQ(b->precision, "triad");
  EXPECT_EQ(b->run_id, id);
  EXPECT_FALSE(store::newest_measured_bandwidth(*db, "box", "cuda:0"));
}

}  // namespace
}  // namespace dlbench
