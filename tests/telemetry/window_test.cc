// MeasuredWindow, the telemetry of one measured phase shared by the native and peer runners:
// nothing when disabled or never begun; on this machine's CPU sources (NVML made absent) one
// Recording whose summary, columns, samples and notes agree with each other.
#include "bench/telemetry/window.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/core/error.h"

namespace dlbench::telemetry {
namespace {

std::shared_ptr<const nvml::Nvml> no_nvml() {
  return nvml::Nvml::open("/nonexistent/libnvidia-ml.so.1");
}

void busy_for(std::chrono::milliseconds span) {
  const auto until = std::chrono::steady_clock::now() + span;
  volatile double x = 1;
  while (std::chrono::steady_clock::now() < until) x = x * 1.0000001 + 1e-9;
}

TEST(MeasuredWindowTest, DisabledRecordsNothing) {
  MeasuredWindow window(false, getpid(), 0.1, no_nvml());
  window.begin();
  EXPECT_FALSE(window.began());
  window.end();
  EXPECT_FALSE(window.take().has_value());
}

TEST(MeasuredWindowTest, NeverBegunRecordsNothing) {
  MeasuredWindow window(true, getpid(), 0.1, no_nvml());
  window.end();  // harmless before begin
  EXPECT_FALSE(window.take().has_value());
}

TEST(MeasuredWindowTest, OneWindowOnTheCpuSourcesIsOneConsistentRecording) {
  MeasuredWindow window(true, getpid(), 0.1, no_nvml());
  window.begin();
  ASSERT_TRUE(window.began());
  window.begin();  // a second begin (a peer's step after its "measure") keeps the window
  busy_for(std::chrono::milliseconds(350));
  window.end();
  std::optional<Recording> r = window.take();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(window.take().has_value()) << "taken twice";

  // Start, stop and at least two interval ticks in 0.35 s.
  EXPECT_GE(r->samples.size(), 4u);
  EXPECT_EQ(r->summary.samples, r->samples.size());
  EXPECT_DOUBLE_EQ(r->summary.interval_s, 0.1);
  EXPECT_GT(r->summary.duration_s, 0.3);
  // One column per metric, in the summary's order.
  ASSERT_EQ(r->summary.metrics.size(), r->metrics.size());
  for (std::size_t i = 0; i < r->metrics.size(); ++i)
    EXPECT_EQ(r->summary.metrics[i].spec.name, r->metrics[i].name);
  for (const Sample& s : r->samples) EXPECT_EQ(s.values.size(), r->metrics.size());
  // No GPU without NVML, and the sources' note says why, after the sampler's own notes.
  EXPECT_TRUE(r->gpus.empty());
  ASSERT_FALSE(r->summary.notes.empty());
  EXPECT_NE(r->summary.notes.back().find("host metrics only"), std::string::npos)
      << r->summary.notes.back();
  // This process was busy: its CPU and memory were seen.
  const MetricSummary* cpu = r->summary.find("process.cpu");
  ASSERT_NE(cpu, nullptr);
  ASSERT_TRUE(cpu->mean.available()) << cpu->reason;
  EXPECT_GT(cpu->mean.value(), 5.0);
  const MetricSummary* rss = r->summary.find("process.rss");
  ASSERT_NE(rss, nullptr);
  EXPECT_GT(rss->max.value(), 0);
}

TEST(MeasuredWindowTest, AnIntervalOutOfRangeIsRefusedAtBegin) {
  MeasuredWindow window(true, getpid(), 0.001, no_nvml());
  try {
    window.begin();
    ADD_FAILURE() << "accepted a 1 ms interval";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
  EXPECT_FALSE(window.take().has_value());
}

}  // namespace
}  // namespace dlbench::telemetry
