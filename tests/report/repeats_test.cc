// --repeat N (bench/result/repeats.h): what a user may type, the median and spread of the
// repeats, a repeat interrupted on the way, and the ratio's uncertainty compare shows; and the
// report's and compare's view of runs with repeats and warnings.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "bench/report/compare.h"
#include "bench/report/html_report.h"
#include "bench/report/report_data.h"
#include "bench/result/repeats.h"
#include "bench/result/run_result.h"
#include "tests/store/store_test_util.h"

namespace dlbench::result {
namespace {

using nlohmann::json;

TEST(RepeatsTest, RepeatIsAWholeNumberFromOneToAHundred) {
  EXPECT_EQ(parse_repeat("1"), 1);
  EXPECT_EQ(parse_repeat("3"), 3);
  EXPECT_EQ(parse_repeat(std::to_string(kMaxRepeats)), kMaxRepeats);
  for (const char* bad :
       {"0", "-1", "101", "x", "1.5", " 3", "3 ", "", "0x10", "99999999999999999999999"}) {
    try {
      parse_repeat(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "repeat") << bad;
      EXPECT_NE(e.problem().find("1 to 100"), std::string::npos) << e.problem();
      EXPECT_EQ(e.problem().find('\n'), std::string::npos) << "one line: " << e.problem();
    }
  }
}

TEST(RepeatsTest, MedianIsOneMeasurementAndTheSpreadItsRange) {
  const SpreadStats odd = spread_stats({30, 10, 20});
  EXPECT_EQ(odd.count, 3);
  EXPECT_DOUBLE_EQ(odd.median, 20);
  EXPECT_DOUBLE_EQ(odd.min, 10);
  EXPECT_DOUBLE_EQ(odd.max, 30);
  EXPECT_DOUBLE_EQ(odd.range, (30.0 - 10) / 20);
  EXPECT_DOUBLE_EQ(odd.stddev, 10.0 / 20);  // sample standard deviation 10 over mean 20
  // An even count: the lower middle one, a figure some repeat measured.
  EXPECT_DOUBLE_EQ(spread_stats({40, 10, 30, 20}).median, 20);
  // One value has no spread of its own.
  EXPECT_TRUE(std::isnan(spread_stats({5}).stddev));
  EXPECT_TRUE(std::isnan(spread_stats({5}).std_error));
}

RunResult measured(double throughput, const std::string& interrupted = "") {
  RunResult r;
  r.measured_steps = 20;
  r.measured_seconds = 20 / throughput;
  r.throughput = throughput;
  r.interrupted = interrupted;
  add_timing_metrics(r, "their wall time", "none");
  return r;
}

TEST(RepeatsTest, RunRepeatedCombinesAndStopsAtAnInterruption) {
  int calls = 0;
  const RunResult one = run_repeated(1, [&](int) {
    ++calls;
    return measured(7);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(one.repeats.has_value()) << "one measurement is a plain run";

  const double rates[] = {12, 10, 11};
  const RunResult three = run_repeated(3, [&](int k) { return measured(rates[k - 1]); });
  ASSERT_TRUE(three.repeats.has_value());
  EXPECT_EQ(three.repeats->requested, 3);
  EXPECT_EQ(three.repeats->runs.size(), 3u);
  EXPECT_DOUBLE_EQ(three.throughput, 11);
  EXPECT_TRUE(three.interrupted.empty());

  calls = 0;
  const RunResult cut = run_repeated(3, [&](int k) {
    ++calls;
    return measured(rates[k - 1],
                    k == 2 ? "interrupted by SIGINT after 3 of 20 measured steps" : "");
  });
  EXPECT_EQ(calls, 2) << "no repeat after the interrupted one";
  ASSERT_TRUE(cut.repeats.has_value());
  EXPECT_EQ(cut.repeats->runs.size(), 1u) << "only the completed repeat counts";
  EXPECT_DOUBLE_EQ(cut.throughput, rates[0]);
  EXPECT_NE(cut.interrupted.find("(in repeat 2 of 3; the result is the median of the 1 repeat"),
            std::string::npos)
      << cut.interrupted;

  const RunResult first = run_repeated(
      3, [&](int) { return measured(5, "interrupted by SIGINT after 1 of 20 measured steps"); });
  EXPECT_FALSE(first.repeats.has_value());
  EXPECT_NE(first.interrupted.find("(in repeat 1 of 3)"), std::string::npos) << first.interrupted;
}

// ratio = B / A; its standard error from each side's standard error of the mean, in quadrature.
TEST(RepeatsTest, RatioUncertaintyOnlyWhenBothSidesHaveRepeats) {
  const std::vector<double> a = {99, 100, 101}, b = {148, 150, 152};
  const RatioEstimate e = throughput_ratio(100, a, 150, b);
  EXPECT_DOUBLE_EQ(e.ratio, 1.5);
  const SpreadStats sa = spread_stats(a), sb = spread_stats(b);
  EXPECT_NEAR(e.uncertainty,
              1.5 * std::sqrt(sa.std_error * sa.std_error + sb.std_error * sb.std_error), 1e-12);
  EXPECT_GT(e.uncertainty, 0);
  EXPECT_TRUE(std::isnan(throughput_ratio(100, {}, 150, b).uncertainty));
  EXPECT_TRUE(std::isnan(throughput_ratio(100, a, 150, {150}).uncertainty));
  EXPECT_DOUBLE_EQ(throughput_ratio(100, {}, 150, {}).ratio, 1.5);
  EXPECT_TRUE(std::isnan(throughput_ratio(0, a, 150, b).ratio));
}

// A stored run with repeats and warnings, as dlbench run stores it.
store::RunRecord stored(double throughput, const std::vector<double>& repeats, int steps) {
  store::RunRecord r = testing::sample_run("resnet50", throughput);
  r.result["measured_steps"] = steps;
  r.result["step_time_ms"]["cv"] = 0.01;
  if (!repeats.empty()) r.result["repeats"] = {{"throughputs_samples_per_s", repeats}};
  return r;
}

TEST(RepeatsTest, CompareShowsTheRatioWithItsUncertainty) {
  auto db = store::open_store(testing::temp_folder("compare-repeats") + "/r.db");
  const std::int64_t a = db->save_run(stored(100, {99, 100, 101}, 20));
  const std::int64_t b = db->save_run(stored(150, {148, 150, 152}, 20));
  const std::int64_t plain = db->save_run(stored(120, {}, 5));
  const RatioEstimate e = throughput_ratio(100, {99, 100, 101}, 150, {148, 150, 152});
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.2fx \xC2\xB1 %.2f", e.ratio, e.uncertainty);
  report::Comparison c =
      report::compare(*db, std::to_string(a), std::to_string(b), report::CompareKind::kRuns);
  ASSERT_EQ(c.table.rows.size(), 1u);
  EXPECT_EQ(c.table.rows[0][3], expected);
  const auto& cols = c.table.columns;
  EXPECT_NE(std::find(cols.begin(), cols.end(), "A repeats"), cols.end());
  EXPECT_EQ(std::find(cols.begin(), cols.end(), "warnings"), cols.end()) << "neither run is noisy";
  // One side without repeats: the ratio as before, and that run's warning named.
  c = report::compare(*db, std::to_string(a), std::to_string(plain), report::CompareKind::kRuns);
  ASSERT_EQ(c.table.rows.size(), 1u);
  EXPECT_EQ(c.table.rows[0][3], "1.20x");
  EXPECT_EQ(c.table.rows[0].back(), "B: few-steps");
}

TEST(RepeatsTest, ReportMarksTheNoisyThroughput) {
  report::ReportData d;
  d.title = "dlbench report: runs 1 2";
  store::RunRecord quiet = stored(100, {99, 100, 101}, 20), noisy = stored(90, {}, 3);
  quiet.id = 1;
  noisy.id = 2;
  d.runs = {quiet, noisy};
  d.machines = {quiet.machine};
  const report::Table runs = report::report_tables(d).front();
  ASSERT_EQ(runs.id, "runs");
  ASSERT_EQ(runs.columns.back(), "warnings");
  EXPECT_EQ(runs.rows[0].back(), "");
  EXPECT_EQ(runs.rows[1].back(), "few-steps");
  ASSERT_EQ(runs.flags.size(), 1u);
  EXPECT_EQ(runs.flags[0].row, 1u);
  EXPECT_EQ(runs.flags[0].column, "samples/s");
  const auto repeats = std::find(runs.columns.begin(), runs.columns.end(), "repeats");
  ASSERT_NE(repeats, runs.columns.end());
  EXPECT_EQ(runs.rows[0][static_cast<std::size_t>(repeats - runs.columns.begin())], "3");

  std::ostringstream page;
  report::write_html(d, page);
  const std::string html = page.str();
  // The sign sits in the throughput's cell, its tooltip and footnote give the figure.
  EXPECT_NE(html.find("<td class=\"num\">90.00 <a class=\"warn\" href=\"#runs-note-1\" title=\""),
            std::string::npos);
  EXPECT_NE(html.find("<li id=\"runs-note-1\">&#9888; "), std::string::npos);
  EXPECT_NE(html.find("only 3 measured steps"), std::string::npos);
  EXPECT_NE(html.find("1 of 2 runs carry noise warnings"), std::string::npos);
  EXPECT_EQ(html.find(">warnings</th>"), std::string::npos) << "the page shows marks instead";
}

}  // namespace
}  // namespace dlbench::result
