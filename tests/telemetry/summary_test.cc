// The summary arithmetic on made-up samples: each metric kind combines the way metric.h says.
#include "bench/telemetry/summary.h"

#include <gtest/gtest.h>

#include <cmath>

namespace dlbench::telemetry {
namespace {

const double kNaN = std::nan("");

// Rows at the given seconds, one metric.
std::vector<Sample> rows(const std::vector<double>& seconds, const std::vector<double>& values) {
  std::vector<Sample> out;
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    Sample s;
    s.tick.monotonic_ns = static_cast<std::int64_t>(seconds[i] * 1e9);
    s.tick.unix_ns = 1'700'000'000'000'000'000 + s.tick.monotonic_ns;
    s.values = {values[i]};
    out.push_back(s);
  }
  return out;
}

MetricSummary one(const MetricSpec& spec, const std::vector<Sample>& samples,
                  double interval_s = 1.0, double window = kNaN, std::string reason = "") {
  return summarize({spec}, samples, {std::move(reason)}, {window}, interval_s)[0];
}

TEST(SummaryTest, LevelIsTimeWeightedByTheTrapezoidRule) {
  // 0 for 1 s, ramp to 10 over 1 s, then 10 for 2 s: area 0 + 5 + 20 = 25 over 4 s.
  auto s = one(level_metric("m", "", "W"), rows({0, 1, 2, 4}, {0, 0, 10, 10}));
  ASSERT_TRUE(s.available());
  EXPECT_EQ(s.samples, 4u);
  EXPECT_DOUBLE_EQ(s.mean.value(), 25.0 / 4.0);
  EXPECT_DOUBLE_EQ(s.min.value(), 0);
  EXPECT_DOUBLE_EQ(s.max.value(), 10);
  EXPECT_FALSE(s.total.available());
}

TEST(SummaryTest, LevelWithUnevenSpacingIsNotTheArithmeticMean) {
  // A long stretch at 100 outweighs a short one at 0, however many samples each has.
  auto s = one(level_metric("m", "", "%"), rows({0, 0.1, 0.2, 0.3, 10.3}, {0, 0, 0, 100, 100}));
  EXPECT_GT(s.mean.value(), 90.0);
}

TEST(SummaryTest, IntervalAverageWeighsEachIntervalAndSkipsTheFirstSample) {
  // The first value (99) describes time before the window and is left out.
  auto s = one(interval_metric("m", "", "%"), rows({0, 1, 3}, {99, 10, 40}));
  EXPECT_EQ(s.samples, 2u);
  EXPECT_DOUBLE_EQ(s.mean.value(), (10 * 1 + 40 * 2) / 3.0);
  EXPECT_DOUBLE_EQ(s.max.value(), 40);
}

TEST(SummaryTest, IntervalAverageAfterAGapSpansTheGap) {
  // The value at 3 s was measured since the last value at 1 s, so it weighs 2 s.
  auto s = one(interval_metric("m", "", "%"), rows({0, 1, 2, 3}, {kNaN, 10, kNaN, 40}));
  EXPECT_DOUBLE_EQ(s.mean.value(), (10 * 1 + 40 * 2) / 3.0);
}

TEST(SummaryTest, WindowFigureBecomesTheMean) {
  auto s = one(interval_metric("m", "", "%"), rows({0, 1, 2}, {kNaN, 50, 70}), 1.0, 61.5);
  EXPECT_DOUBLE_EQ(s.mean.value(), 61.5);
  ASSERT_TRUE(s.window.available());
  EXPECT_DOUBLE_EQ(s.max.value(), 70);
}

TEST(SummaryTest, CounterIsDifferencedNotAveraged) {
  // Energy in J: 100 J in the first second, 300 J in the next two.
  auto s = one(counter_metric("e", "", "W", "J", 1.0), rows({0, 1, 3}, {1000, 1100, 1400}));
  ASSERT_TRUE(s.available());
  EXPECT_DOUBLE_EQ(s.total.value(), 400);
  EXPECT_DOUBLE_EQ(s.mean.value(), 400.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.min.value(), 100);
  EXPECT_DOUBLE_EQ(s.max.value(), 150);
}

TEST(SummaryTest, CounterReadLessOftenThanTheTicksIsDifferencedAcrossTheGaps) {
  // The energy counter is read at the window's edges and once a second between: the rows
  // in between have no reading, and nothing of the window's increase may be lost.
  auto s = one(counter_metric("e", "", "W", "J", 1.0),
               rows({0, 0.5, 1, 1.5, 2, 2.5}, {1000, kNaN, 1200, kNaN, kNaN, 1700}));
  ASSERT_TRUE(s.available());
  EXPECT_EQ(s.samples, 3u);
  EXPECT_DOUBLE_EQ(s.total.value(), 700);
  EXPECT_DOUBLE_EQ(s.mean.value(), 700.0 / 2.5);
  EXPECT_DOUBLE_EQ(s.min.value(), 200);
  EXPECT_DOUBLE_EQ(s.max.value(), 500.0 / 1.5);
}

TEST(SummaryTest, CounterRateScaleTurnsCpuSecondsIntoPercentOfACore) {
  auto s = one(counter_metric("cpu", "", "%", "s", 100.0), rows({0, 1, 2}, {5, 5.5, 6.5}));
  EXPECT_DOUBLE_EQ(s.mean.value(), 75.0);
  EXPECT_DOUBLE_EQ(s.max.value(), 100.0);
  EXPECT_DOUBLE_EQ(s.total.value(), 1.5);
}

TEST(SummaryTest, CounterResetSkipsThatIntervalOnly) {
  // The counter restarts between 1 s and 2 s (driver reload); that interval is not counted.
  auto s = one(counter_metric("b", "", "B/s", "B", 1.0), rows({0, 1, 2, 3}, {100, 200, 5, 25}));
  EXPECT_DOUBLE_EQ(s.total.value(), 120);
  EXPECT_DOUBLE_EQ(s.mean.value(), 60);  // 120 B over the 2 s that were covered
}

TEST(SummaryTest, CounterSliverIntervalIsMergedForMaxButNotLostFromTheMean) {
  // 10 ms ticks: a 5 ms last interval that caught one tick would read 200 % alone.
  auto s = one(counter_metric("cpu", "", "%", "s", 100.0),
               rows({0, 0.5, 1.0, 1.005}, {0, 0.5, 1.0, 1.01}), 0.5);
  EXPECT_NEAR(s.max.value(), 100.0 * 0.51 / 0.505, 1e-5);
  EXPECT_NEAR(s.mean.value(), 100.0 * 1.01 / 1.005, 1e-5);
  EXPECT_NEAR(s.total.value(), 1.01, 1e-12);
}

TEST(SummaryTest, CounterWithOneReadingSaysWhy) {
  auto s = one(counter_metric("e", "", "W", "J", 1.0), rows({0, 1}, {7, kNaN}));
  EXPECT_FALSE(s.available());
  EXPECT_NE(s.reason.find("two readings"), std::string::npos) << s.reason;
}

TEST(SummaryTest, BitmaskIsOredAndNamed) {
  auto spec = bitmask_metric("f", "", {"idle", "", "power_cap"});
  auto s = one(spec, rows({0, 1, 2}, {1, 4, kNaN}));
  ASSERT_TRUE(s.mask.available());
  EXPECT_EQ(s.mask.value(), 5u);
  EXPECT_EQ(bit_names(spec, 5), (std::vector<std::string>{"idle", "power_cap"}));
  EXPECT_EQ(bit_names(spec, 2), (std::vector<std::string>{"0x2"}));
  EXPECT_FALSE(s.mean.available());
}

// "Power cap during 40 % of the run": each reading stands for half the time to each neighbour,
// so the share is of time, not of readings.
TEST(SummaryTest, BitmaskShareIsTheTimeEachBitWasSet) {
  auto spec = bitmask_metric("f", "", {"idle", "", "power_cap"});
  // Readings at 0..5 s (1 s apart): power_cap at 1, 2 (each 1 s), idle at 0 and 5 (0.5 s each).
  auto s = one(spec, rows({0, 1, 2, 3, 4, 5}, {1, 4, 4, 0, 0, 1}));
  ASSERT_EQ(s.bit_share.size(), 64u);
  EXPECT_NEAR(s.bit_share[2], 2.0 / 5.0, 1e-12);
  EXPECT_NEAR(s.bit_share[0], 1.0 / 5.0, 1e-12);
  EXPECT_EQ(s.bit_share[1], 0.0);
  // Uneven ticks: the reading after a long gap covers half of it.
  auto uneven = one(spec, rows({0, 1, 5}, {0, 0, 4}));
  EXPECT_NEAR(uneven.bit_share[2], 2.0 / 5.0, 1e-12);
  // One reading is the whole window.
  EXPECT_EQ(one(spec, rows({0}, {4})).bit_share[2], 1.0);
  EXPECT_TRUE(one(spec, rows({0}, {kNaN})).bit_share.empty());
}

TEST(SummaryTest, MissingMetricCarriesTheSourcesReasonNeverZero) {
  auto s = one(level_metric("m", "", "%"), rows({0, 1}, {kNaN, kNaN}), 1.0, kNaN,
               "not supported by this GPU or driver");
  EXPECT_FALSE(s.available());
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.reason, "not supported by this GPU or driver");
  EXPECT_FALSE(s.mean.available());
  EXPECT_EQ(s.mean.reason(), s.reason);
}

TEST(SummaryTest, QuantileInterpolates) {
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.95), 9.5);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.95), 7);
  EXPECT_TRUE(std::isnan(quantile({}, 0.95)));
}

TEST(SummaryTest, IntervalRateIsNaNAcrossAReset) {
  auto spec = counter_metric("b", "", "B/s", "B", 1.0);
  auto r = rows({0, 2, 3}, {10, 30, 5});
  EXPECT_DOUBLE_EQ(interval_rate(spec, r[0], r[1], 0), 10);
  EXPECT_TRUE(std::isnan(interval_rate(spec, r[1], r[2], 0)));
}

}  // namespace
}  // namespace dlbench::telemetry
