// The machine's profile in the report (issue 19) from made-up runs: MFU where the achieved
// TFLOP/s are, samples per joule and mean power beside energy per sample, and the machine card's
// measured compute per precision and measured memory bandwidth.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "bench/report/machine_card.h"
#include "bench/report/report_data.h"
#include "tests/report/gpu_fixture.h"

namespace dlbench::report {
namespace {

const Table& table(const std::vector<Table>& tables, const std::string& id) {
  for (const Table& t : tables)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

std::string cell(const Table& t, std::size_t row, const std::string& column) {
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c] == column) return t.rows.at(row).at(c);
  throw std::runtime_error("no column " + column);
}

ReportData one_h100_run() {
  ReportData d;
  store::RunRecord r = testing::h100_run("train", "fp16", 1000);
  r.id = 7;
  r.machine.id = 1;
  r.metrics.push_back({"compute/mfu", 0.41, "ratio", "achieved / the measured fp16 peak"});
  d.machines.push_back(r.machine);
  d.runs.push_back(r);
  return d;
}

TEST(MachineProfileReportTest, MfuStandsBesideTheAchievedTflops) {
  const std::vector<Table> tables = report_tables(one_h100_run());
  const Table runs = table(tables, "runs");
  EXPECT_EQ(cell(runs, 0, "TFLOP/s"), "24.60");
  EXPECT_EQ(cell(runs, 0, "MFU %"), "41.0");
}

TEST(MachineProfileReportTest, EnergyTableHasSamplesPerJouleAndMeanPower) {
  // 1000 samples/s for 5 s = 5000 samples; 3200 J; the counter's mean rate 640 W.
  const std::vector<Table> tables = report_tables(one_h100_run());
  const Table energy = table(tables, "energy");
  EXPECT_EQ(cell(energy, 0, "energy J"), "3200.0");
  EXPECT_EQ(cell(energy, 0, "J/sample"), "0.640");
  EXPECT_EQ(cell(energy, 0, "samples/J"), "1.56");
  EXPECT_EQ(cell(energy, 0, "mean power W"), "640");
}

TEST(MachineProfileReportTest, CardShowsMeasuredComputeAndBandwidth) {
  ReportData d = one_h100_run();
  MachineMeasured mm;
  mm.device = "cuda:0";
  mm.precisions = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};
  mm.compute["fp16"] = {712.3, "TFLOP/s", "fp16", "cuda:0", 3, 0, "8192^3"};
  mm.bandwidth = store::MeasuredPeak{2950, "GB/s", "copy", "cuda:0", 4, 0, "copy"};
  d.measured[1] = mm;
  std::ostringstream out;
  write_machine_cards(d, out);
  const std::string html = out.str();
  EXPECT_NE(html.find("<dt>Compute (measured, cuda:0)</dt>"), std::string::npos) << html;
  EXPECT_NE(html.find("fp16 712.3 TFLOP/s (micro gemm run 3)"), std::string::npos) << html;
  EXPECT_NE(html.find("fp64 not measured"), std::string::npos) << html;
  EXPECT_NE(html.find("2950 GB/s measured (copy, micro bandwidth run 4) of 3352 GB/s "
                      "(theoretical)"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<dt>Power limit</dt><dd>700 W</dd>"), std::string::npos) << html;

  // Nothing measured: the card says how to measure it.
  d.measured[1] = MachineMeasured{"cuda:0", mm.precisions, {}, std::nullopt};
  std::ostringstream bare;
  write_machine_cards(d, bare);
  EXPECT_NE(bare.str().find("not measured (run `dlbench micro gemm --device cuda:0`)"),
            std::string::npos)
      << bare.str();
  EXPECT_NE(bare.str().find("(theoretical), measured: not measured"), std::string::npos);
}

}  // namespace
}  // namespace dlbench::report
