// The report's memory figures: a run's allocator peak is the peer's own (memory/peak_gib) or
// the native engine's allocated peak (memory/allocated_peak_gib), and the memory chart shows it
// beside the planned memory. Runs are made up.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench/report/charts.h"
#include "bench/report/report_data.h"
#include "engine/core/json_text.h"
#include "tests/store/store_test_util.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

RunRecord run(std::int64_t id, const std::string& framework,
              std::vector<store::MetricRecord> metrics) {
  RunRecord r = testing::sample_run();
  r.id = id;
  r.framework = framework;
  r.metrics = std::move(metrics);
  return r;
}

TEST(MemoryChartTest, AllocatorPeakIsThePeersOrTheEnginesAllocatedPeak) {
  const RunRecord native = run(
      1, "native",
      {{"memory/planned_gib", 10.4, "GiB", ""}, {"memory/allocated_peak_gib", 10.7, "GiB", ""}});
  const RunRecord peer = run(2, "pytorch", {{"memory/peak_gib", 10.6, "GiB", ""}});
  const RunRecord old_native = run(3, "native", {{"memory/planned_gib", 10.4, "GiB", ""}});
  EXPECT_DOUBLE_EQ(allocator_peak_gib(native), 10.7);
  EXPECT_DOUBLE_EQ(allocator_peak_gib(peer), 10.6);
  EXPECT_TRUE(std::isnan(allocator_peak_gib(old_native)));  // stored before the metric existed

  ReportData data;
  data.runs = {native, peer, old_native};
  const json charts = report_charts(data);
  const json* memory = nullptr;
  for (const json& c : charts)
    if (c.value("title", "") == "Peak memory per run") memory = &c;
  ASSERT_NE(memory, nullptr) << dump_json(charts, 2);
  const json* allocated = nullptr;
  for (const json& d : (*memory)["datasets"])
    if (d["label"] == "allocator peak") allocated = &d;
  ASSERT_NE(allocated, nullptr) << dump_json(*memory, 2);
  ASSERT_EQ((*allocated)["data"].size(), 3u);
  EXPECT_DOUBLE_EQ((*allocated)["data"][0].get<double>(), 10.7);
  EXPECT_DOUBLE_EQ((*allocated)["data"][1].get<double>(), 10.6);
  EXPECT_TRUE((*allocated)["data"][2].is_null());
}

}  // namespace
}  // namespace dlbench::report
