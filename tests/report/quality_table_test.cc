// The report's quality table: each held-out measure a run stored (Dice per class, HR@10 beside
// its baseline) is a row with the data it was measured on; runs without any leave the table
// empty (and out of the page), and the HTML report shows it when there is one. Runs are made up.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "bench/report/html_report.h"
#include "bench/report/quality_table.h"
#include "tests/store/store_test_util.h"

namespace dlbench::report {
namespace {

using store::RunRecord;

RunRecord run(std::int64_t id, const std::string& model, std::vector<store::MetricRecord> metrics,
              const std::string& data = "") {
  RunRecord r = testing::sample_run();
  r.id = id;
  r.model = model;
  r.metrics = std::move(metrics);
  if (!data.empty()) r.result["data_description"] = data;
  return r;
}

TEST(QualityTableTest, EachHeldOutMeasureIsARowWithItsData) {
  const RunRecord unet =
      run(7, "unet",
          {{"throughput/samples_per_s", 330.2, "samples/s", ""},
           {"quality/dice_mean", 0.8125, "ratio", "Dice, mean over the classes but the background"},
           {"quality/dice_class_1", 0.9, "ratio", "Dice of class 1"},
           {"quality/held_out_slices", 412, "slices", "held-out slices segmented, each once"}},
          "CT cases /data/kits19: 300 slices");
  const RunRecord synthetic = run(8, "resnet50", {{"throughput/samples_per_s", 812, "", ""}});
  const Table t = quality_table({unet, synthetic});
  ASSERT_EQ(t.rows.size(), 3u);
  const std::vector<std::string>& first = t.rows[0];
  EXPECT_EQ(first[0], "7");
  EXPECT_EQ(first[1], "unet");
  EXPECT_EQ(first[3], "CT cases /data/kits19: 300 slices");
  EXPECT_EQ(first[4], "dice_mean");
  EXPECT_EQ(first[5], "0.812");  // a ratio: 3 decimals (0.8125 rounds to even)
  EXPECT_EQ(t.rows[2][4], "held_out_slices");
  EXPECT_EQ(t.rows[2][5], "412");  // a count: whole
  EXPECT_TRUE(quality_table({synthetic}).rows.empty());

  ReportData data;
  data.runs = {unet, synthetic};
  std::ostringstream html;
  write_html(data, html);
  EXPECT_NE(html.str().find("Quality on held-out data"), std::string::npos);
  data.runs = {synthetic};
  std::ostringstream without;
  write_html(data, without);
  EXPECT_EQ(without.str().find("Quality on held-out data"), std::string::npos);
}

}  // namespace
}  // namespace dlbench::report
