// What a reader of the HTML report sees first and reads without hovering (issue 18): machines
// named by what they are, precisions named as people know them, training and inference on
// charts of their own with value labels, speedups against strict FP32 and TF32, the throttle
// flag per run, the compact telemetry summary, and a CPU-only report that does not explain GPU
// metrics it does not show. Runs are made up (gpu_fixture.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "bench/report/charts.h"
#include "bench/report/html_report.h"
#include "bench/report/machine_card.h"
#include "bench/report/names.h"
#include "bench/report/report_data.h"
#include "bench/report/telemetry_view.h"
#include "engine/core/json_text.h"
#include "tests/report/gpu_fixture.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

// ResNet-50 training and inference in the four precisions on one H100; training in fp16
// throttled by the power cap for 40 % of its measured phase.
ReportData h100_report() {
  ReportData d;
  d.title = "dlbench report: suite quick (quick-20261125T0900-1)";
  std::int64_t id = 0;
  for (const char* mode : {"train", "infer"})
    for (const auto& [precision, rate] : std::vector<std::pair<const char*, double>>{
             {"fp32", 1118}, {"tf32", 2445}, {"fp16", 4953}, {"bf16", 4829}}) {
      RunRecord r = testing::h100_run(
          mode, precision, std::string(mode) == "train" ? rate : 3 * rate,
          std::string(mode) == "train" && std::string(precision) == "fp16" ? 40 : 0);
      r.id = ++id;
      r.machine.id = 1;
      d.runs.push_back(r);
    }
  d.machines = {d.runs.front().machine};
  return d;
}

const json* chart(const json& charts, const std::string& title) {
  for (const json& c : charts)
    if (c.value("title", "") == title) return &c;
  return nullptr;
}

// The id as a pointer, not a const std::string&: a returned reference next to a temporary string
// argument trips GCC 13's -Wdangling-reference.
const Table& table(const std::vector<Table>& tables, const char* id) {
  for (const Table& t : tables)
    if (t.id == id) return t;
  throw std::runtime_error(std::string("no table ") + id);
}

std::string html(const ReportData& d) {
  std::ostringstream out;
  write_html(d, out);
  return out.str();
}

TEST(ReportViewTest, PrecisionsAreNamedAsPeopleKnowThem) {
  EXPECT_EQ(precision_label("fp32"), "FP32 (strict, no TF32)");
  EXPECT_EQ(precision_label("tf32"), "TF32");
  EXPECT_EQ(precision_label("fp16"), "FP16 (mixed)");
  EXPECT_EQ(precision_label("bf16"), "BF16 (mixed)");
  const ReportData d = h100_report();
  const std::vector<Table> tables = report_tables(d);
  const Table& runs = table(tables, "runs");
  EXPECT_EQ(runs.rows[0][4], "FP32 (strict, no TF32)");
  const json charts = report_charts(d);
  const json* training = chart(charts, "Training throughput (images/s, higher is better)");
  ASSERT_NE(training, nullptr) << dump_json(charts, 1);
  std::vector<std::string> legend;
  for (const json& set : (*training)["datasets"]) legend.push_back(set["label"]);
  EXPECT_EQ(legend, (std::vector<std::string>{"FP32 (strict, no TF32)", "TF32", "FP16 (mixed)",
                                              "BF16 (mixed)"}));
}

TEST(ReportViewTest, TrainingAndInferenceHaveChartsOfTheirOwnWithValueLabelsAndUnits) {
  const json charts = report_charts(h100_report());
  const json* training = chart(charts, "Training throughput (images/s, higher is better)");
  const json* inference = chart(charts, "Inference throughput (images/s, higher is better)");
  ASSERT_NE(training, nullptr);
  ASSERT_NE(inference, nullptr);
  EXPECT_EQ((*training)["labels"], json::array({"ResNet-50 b128 224px"}));
  EXPECT_EQ((*inference)["labels"], json::array({"ResNet-50 b64 224px"}));
  EXPECT_EQ((*inference)["datasets"][0]["data"][0], 3 * 1118.0);
  for (const json* c : {training, inference}) {
    EXPECT_EQ((*c)["valueLabels"], true);
    EXPECT_EQ((*c)["unit"], "throughput (images/s)");
  }
}

// A recommender's throughput is pairs/s, as its stored sample unit says, and it has no input
// size to show; a run stored before the unit was keeps the image models' images/s.
TEST(ReportViewTest, ThroughputIsLabelledWithTheStoredSampleUnit) {
  ReportData d;
  RunRecord ncf = testing::h100_run("train", "fp16", 1.15e6);
  ncf.id = 1, ncf.machine.id = 1;
  ncf.model = "ncf";
  ncf.batch = 256;
  ncf.input_size = 0;
  ncf.result["sample_unit"] = "pairs";
  d.runs = {ncf};
  d.machines = {ncf.machine};
  const json charts = report_charts(d);
  const json* training = chart(charts, "Training throughput (pairs/s, higher is better)");
  ASSERT_NE(training, nullptr) << dump_json(charts, 1);
  EXPECT_EQ((*training)["labels"], json::array({"NCF b256"}));
  EXPECT_NE(html(d).find("<h3>NCF, pairs/s (higher is better)</h3>"), std::string::npos);
  RunRecord old = testing::h100_run("train", "fp16", 4953);
  old.result.erase("sample_unit");
  EXPECT_EQ(throughput_unit(old), "images/s");
}

// GNMT's greedy decoding and its beam search of the same sentences are two workloads: each has a
// bar of its own on the chart, the runs table says which searched, and each precision's speedup
// is over the same search's FP32 (not the greedy run's over the beam's).
TEST(ReportViewTest, ABeamSearchIsToldApartFromGreedyDecoding) {
  ReportData d;
  std::int64_t id = 0;
  for (int beam : {1, 5})
    for (const auto& [precision, rate] :
         std::vector<std::pair<const char*, double>>{{"fp32", 700.0}, {"fp16", 3000.0}}) {
      RunRecord r = testing::h100_run("infer", precision, beam == 1 ? 4 * rate : rate);
      r.id = ++id, r.machine.id = 1;
      r.model = "gnmt", r.batch = 128, r.input_size = 0;
      r.result["sample_unit"] = "sentences";
      if (beam > 1) r.config["beam"] = beam;
      d.runs.push_back(r);
    }
  d.machines = {d.runs.front().machine};
  const json charts = report_charts(d);
  const json* inference = chart(charts, "Inference throughput (sentences/s, higher is better)");
  ASSERT_NE(inference, nullptr) << dump_json(charts, 1);
  EXPECT_EQ((*inference)["labels"], json::array({"GNMT v2 b128", "GNMT v2 b128 beam 5"}));
  const std::vector<Table> tables = report_tables(d);
  const Table& runs = table(tables, "runs");
  ASSERT_EQ(runs.rows.size(), 4u);
  EXPECT_EQ(runs.rows[0][3], "infer");
  EXPECT_EQ(runs.rows[2][3], "infer beam 5");
  const Table& speedup = table(tables, "speedup");
  ASSERT_EQ(speedup.rows.size(), 2u);
  EXPECT_EQ(speedup.rows[0][2], "infer");
  EXPECT_EQ(speedup.rows[0][7], "4.29");  // 12000 / 2800
  EXPECT_EQ(speedup.rows[1][2], "infer beam 5");
  EXPECT_EQ(speedup.rows[1][7], "4.29");  // 3000 / 700
  EXPECT_EQ(run_label(d.runs[2]), "GNMT v2 infer FP32 (strict, no TF32) b128 beam 5 #3");
}

TEST(ReportViewTest, SpeedupsAreAgainstStrictFp32AndAgainstTf32) {
  const ReportData d = h100_report();
  const json charts = report_charts(d);
  const json* vs_tf32 = chart(charts, "Speedup over TF32 (same model, mode and batch)");
  const json* vs_fp32 =
      chart(charts, "Speedup over FP32 (strict, no TF32) (same model, mode and batch)");
  ASSERT_NE(vs_tf32, nullptr) << dump_json(charts, 1);
  ASSERT_NE(vs_fp32, nullptr);
  ASSERT_EQ((*vs_tf32)["datasets"].size(), 2u);  // FP16 and BF16; TF32 is the base
  EXPECT_EQ((*vs_tf32)["datasets"][0]["label"], "FP16 (mixed)");
  EXPECT_NEAR((*vs_tf32)["datasets"][0]["data"][0].get<double>(), 4953.0 / 2445, 1e-9);
  EXPECT_EQ((*vs_fp32)["datasets"].size(), 3u);
  EXPECT_EQ((*vs_fp32)["valueSuffix"], "x");
  const std::vector<Table> tables = report_tables(d);
  const Table& speedup = table(tables, "speedup");
  EXPECT_EQ(speedup.columns.back(), "x TF32");
  // The FP16 training row: 4953 / 1118 and 4953 / 2445.
  EXPECT_EQ(speedup.rows[1][5], "FP16 (mixed)");
  EXPECT_EQ(speedup.rows[1][7], "4.43");
  EXPECT_EQ(speedup.rows[1][8], "2.03");
}

// FP16 is the same colour on the throughput and the speedup charts.
TEST(ReportViewTest, PrecisionsKeepTheirColourOnEveryChart) {
  const json charts = report_charts(h100_report());
  for (const char* title : {"Training throughput (images/s, higher is better)",
                            "Speedup over TF32 (same model, mode and batch)"}) {
    const json* c = chart(charts, title);
    ASSERT_NE(c, nullptr) << title;
    for (const json& set : (*c)["datasets"])
      if (set["label"] == "FP16 (mixed)") {
        EXPECT_EQ(set.value("color", ""), "#10b981") << title;
      }
  }
}

// One machine: its name is the title, so the tables do not repeat it on every row; columns
// no run has a value for (the planned memory of these runs) are left out.
TEST(ReportViewTest, HtmlTablesLeaveOutEmptyColumnsAndTheOneMachine) {
  const std::string page = html(h100_report());
  const std::size_t runs = page.find("<h2>Runs</h2>");
  ASSERT_NE(runs, std::string::npos);
  const std::string header = page.substr(runs, page.find("</tr>", runs) - runs);
  EXPECT_EQ(header.find(">machine<"), std::string::npos) << header;
  EXPECT_NE(header.find(">precision<"), std::string::npos) << header;
  const std::size_t memory = page.find("<h2>Peak memory</h2>");
  ASSERT_NE(memory, std::string::npos);
  const std::string memory_header = page.substr(memory, page.find("</tr>", memory) - memory);
  EXPECT_EQ(memory_header.find("planned GiB"), std::string::npos) << memory_header;
  EXPECT_NE(memory_header.find("GPU max GiB"), std::string::npos) << memory_header;
  // Two machines: each row says which.
  ReportData two = h100_report();
  two.runs[1].machine.id = 2;
  two.runs[1].machine.environment["gpu_software"]["driver_version"] = "590.10";
  two.machines.push_back(two.runs[1].machine);
  const std::string both = html(two);
  const std::size_t at = both.find("<h2>Runs</h2>");
  EXPECT_NE(both.substr(at, both.find("</tr>", at) - at).find(">machine<"), std::string::npos);
  EXPECT_NE(both.find("<td>1x NVIDIA H100 80GB HBM3 \xC2\xB7 AMD EPYC 9654 96-Core Processor (16 "
                      "cores) (driver 590.10)</td>"),
            std::string::npos);
}

TEST(ReportViewTest, ThroughputIsInTflopsNotGflops) {
  const std::vector<Table> tables = report_tables(h100_report());
  const Table& runs = table(tables, "runs");
  EXPECT_EQ(runs.columns[13], "TFLOP/s");
  EXPECT_EQ(runs.rows[0][13], "27.50");  // 1118 samples/s x 24.6 GFLOP
}

// A language model's tokens/s gets a column of its own where a run has it; image runs leave it
// empty, and a report of image runs alone has none.
TEST(ReportViewTest, LanguageModelsShowTokensPerSecond) {
  ReportData d = h100_report();
  const std::vector<Table> before = report_tables(d);
  const Table& images = table(before, "runs");
  EXPECT_EQ(std::find(images.columns.begin(), images.columns.end(), "tokens/s"),
            images.columns.end());
  d.runs[0].metrics.push_back({"throughput/tokens_per_s", 341766.4, "tokens/s", ""});
  const std::vector<Table> tables = report_tables(d);
  const Table& runs = table(tables, "runs");
  const auto column = std::find(runs.columns.begin(), runs.columns.end(), "tokens/s");
  ASSERT_NE(column, runs.columns.end());
  const auto at = static_cast<std::size_t>(column - runs.columns.begin());
  EXPECT_EQ(runs.rows[0][at], "341766");
  for (std::size_t i = 1; i < runs.rows.size(); ++i) EXPECT_EQ(runs.rows[i][at], "");
}

TEST(ReportViewTest, MachinesAreNamedByWhatTheyAre) {
  store::MachineRecord h100;
  h100.id = 1;
  h100.hostname = "vm";
  h100.environment = testing::h100_environment();
  EXPECT_EQ(machine_name(h100),
            "1x NVIDIA H100 80GB HBM3 \xC2\xB7 AMD EPYC 9654 96-Core Processor (16 cores)");
  store::MachineRecord two = h100;
  two.id = 11;
  two.environment["gpus"].push_back(two.environment["gpus"][0]);
  EXPECT_EQ(machine_name(two).substr(0, 25), "2x NVIDIA H100 80GB HBM3 ");
  store::MachineRecord cpu;
  cpu.environment = {{"host", {{"cpu_model", "AMD EPYC"}, {"cores", 2}}}, {"gpus", json::array()}};
  EXPECT_EQ(machine_name(cpu), "AMD EPYC (2 cores), no GPU");
  // Two machines of one hardware on one host name: told apart by what differs (the driver),
  // not by "vm #1" and "vm #11".
  store::MachineRecord newer = h100;
  newer.id = 11;
  newer.environment["gpu_software"]["driver_version"] = "590.10";
  const auto names = machine_names({h100, newer});
  EXPECT_EQ(names.at(1).substr(names.at(1).size() - 20), " (driver 580.159.04)");
  EXPECT_EQ(names.at(11).substr(names.at(11).size() - 16), " (driver 590.10)");
  // In chart labels only what differs; a different GPU is named by its GPUs alone.
  EXPECT_EQ(machine_short_names({h100, newer}).at(11), "driver 590.10");
  EXPECT_EQ(machine_short_names({h100, two}).at(11), "2x NVIDIA H100 80GB HBM3");
}

// Two machines of one hardware: the title names the hardware once, then what differs; the
// throughput chart puts the machines in its categories, so each precision keeps its colour.
TEST(ReportViewTest, TwoMachinesOfOneHardwareAreToldApartByWhatDiffers) {
  ReportData d = h100_report();
  for (RunRecord& r : d.runs)
    if (r.id % 2 == 0) {
      r.machine.id = 2;
      r.machine.environment["gpu_software"]["driver_version"] = "570.86.15";
    }
  d.machines = {d.runs[0].machine, d.runs[1].machine};
  EXPECT_EQ(machine_title(d),
            "1x NVIDIA H100 80GB HBM3 \xC2\xB7 AMD EPYC 9654 96-Core Processor (16 cores): "
            "driver 580.159.04 vs driver 570.86.15");
  const json charts = report_charts(d);
  const json* training = chart(charts, "Training throughput (images/s, higher is better)");
  ASSERT_NE(training, nullptr);
  EXPECT_EQ((*training)["labels"], json::array({"ResNet-50 b128 224px \xC2\xB7 driver 580.159.04",
                                                "ResNet-50 b128 224px \xC2\xB7 driver 570.86.15"}));
  EXPECT_EQ((*training)["datasets"].size(), 4u);
  EXPECT_EQ((*training)["datasets"][0]["color"], "#2563eb");
}

TEST(ReportViewTest, ThrottlingIsAFlagWithItsShareOfTheRun) {
  RunRecord r = testing::h100_run("train", "fp16", 4953, 40);
  EXPECT_EQ(throttle_text(r), "throttled: power cap during 40 % of the run");
  EXPECT_TRUE(throttled(r));
  EXPECT_EQ(throttle_text(testing::h100_run("train", "fp16", 4953)), "not throttled");
  // Idle and sync boost do not hold the clocks down.
  r.result["telemetry"]["metrics"]["gpu0.clock_events"] = {
      {"mask", 17}, {"flags", {"gpu_idle", "sync_boost"}}, {"share_percent", {{"gpu_idle", 5}}}};
  EXPECT_EQ(throttle_text(r), "not throttled");
  // Stored before the share existed: the flag, without a made-up share.
  r.result["telemetry"]["metrics"]["gpu0.clock_events"] = {{"mask", 64},
                                                           {"flags", {"hw_thermal_slowdown"}}};
  EXPECT_EQ(throttle_text(r), "throttled: thermal (hardware) at some point in the run");
  // Two reasons, each with its own share.
  r.result["telemetry"]["metrics"]["gpu0.clock_events"] = {
      {"mask", 36},
      {"flags", {"sw_power_cap", "sw_thermal_slowdown"}},
      {"share_percent", {{"sw_power_cap", 40}, {"sw_thermal_slowdown", 2.5}}}};
  EXPECT_EQ(throttle_text(r),
            "throttled: power cap during 40 % of the run, thermal (software) during 2.5 % of the "
            "run");
  EXPECT_EQ(throttle_text(testing::sample_run()), "");  // no clock-event telemetry
}

TEST(ReportViewTest, TelemetrySummaryIsOneRowPerRunWithClocksPowerLimitAndThrottling) {
  const ReportData d = h100_report();
  const Table t = telemetry_summary_table(d);
  ASSERT_EQ(t.rows.size(), 8u);
  auto column = [&](const std::string& name) {
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c] == name) return c;
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  EXPECT_EQ(t.rows[2][column("SM clock MHz")], "1755");
  EXPECT_EQ(t.rows[2][column("memory clock MHz")], "2619");
  EXPECT_EQ(t.rows[2][column("power limit W")], "700");
  EXPECT_EQ(t.rows[2][column("SM clock % of max")], "89");  // 1755 of NVML's 1980 MHz
  EXPECT_EQ(t.rows[2][column("temp. max \xC2\xB0"
                             "C")],
            "68");
  EXPECT_EQ(column("throttling"), 1u);  // next to the run, where a reader looks first
  EXPECT_EQ(t.rows[2][column("throttling")], "throttled: power cap during 40 % of the run");
  EXPECT_EQ(t.rows[0][column("throttling")], "not throttled");
  // Kernel busy comes after SM, tensor and DRAM activity and the clocks.
  EXPECT_GT(column("kernel busy %"), column("power limit W"));
  EXPECT_LT(column("SM %"), column("SM clock MHz"));
}

// A GPU without GPM (before Hopper): no SM, tensor or DRAM activity, so NVML's memory busy is
// shown (last, beside kernel busy), and the columns GPM would fill are left out.
TEST(ReportViewTest, GpusWithoutGpmShowNvmlsMemoryBusy) {
  ReportData d = h100_report();
  for (RunRecord& r : d.runs) {
    r.telemetry.erase(
        std::remove_if(r.telemetry.begin(), r.telemetry.end(),
                       [](const auto& t) { return t.name.find("_active") != std::string::npos; }),
        r.telemetry.end());
    r.telemetry.push_back(testing::telemetry("gpu0.memory_busy", "%", 47, 60));
  }
  const Table t = telemetry_summary_table(d);
  const auto busy = std::find(t.columns.begin(), t.columns.end(), "memory busy %");
  ASSERT_NE(busy, t.columns.end());
  EXPECT_EQ(t.rows[0][busy - t.columns.begin()], "47");
  EXPECT_EQ(*(busy - 1), "kernel busy %");
  EXPECT_EQ(std::find(t.columns.begin(), t.columns.end(), "SM %"), t.columns.end());
  const json charts = report_charts(d);
  const json* activity = chart(charts, "GPU activity per run (% of the measured phase)");
  ASSERT_NE(activity, nullptr);
  EXPECT_EQ((*activity)["datasets"].back()["label"],
            "memory busy (time memory was read or written), mean");
}

TEST(ReportViewTest, PowerChartsCarryThePowerLimit) {
  const json charts = report_charts(h100_report());
  const json* power = chart(charts, "Board power per run (W), against the power limit");
  ASSERT_NE(power, nullptr) << dump_json(charts, 1);
  const json& limit = (*power)["datasets"].back();
  EXPECT_EQ(limit["label"], "power limit");
  EXPECT_EQ(limit["type"], "line");
  EXPECT_EQ(limit["data"][0], 700.0);
  const json* clocks = chart(charts, "Clocks per run (MHz), against the maximum SM clock");
  ASSERT_NE(clocks, nullptr);
  EXPECT_EQ((*clocks)["datasets"].back()["label"], "maximum SM clock (NVML)");
  EXPECT_EQ((*clocks)["datasets"].back()["data"][0], 1980.0);
  const json* timeline = chart(charts, "Board power (W)");
  ASSERT_NE(timeline, nullptr);
  EXPECT_EQ((*timeline)["datasets"].back()["label"], "power limit 700 W");
}

TEST(ReportViewTest, HtmlOpensWithTheMachineAndItsHeadlineNumbers) {
  const std::string page = html(h100_report());
  const std::size_t h1 = page.find(
      "<h1>1x NVIDIA H100 80GB HBM3 \xC2\xB7 AMD EPYC 9654 96-Core Processor (16 cores)</h1>");
  ASSERT_NE(h1, std::string::npos) << page.substr(0, 2000);
  const std::size_t card = page.find("<section class=\"machine card\">");
  ASSERT_NE(card, std::string::npos);
  for (const char* fact :
       {"<dt>Power limit</dt><dd>700 W</dd>",
        "<dt>Interconnect</dt><dd>one GPU (PCIe Gen5 x16)</dd>",
        "driver 580.159.04 \xC2\xB7 CUDA 13.0 \xC2\xB7 cuDNN 9.14.0",
        "<h3>ResNet-50, images/s (higher is better)</h3>",
        "<th class=\"num\">FP32 (strict, no TF32)</th>", "<td class=\"num big\">4953</td>"})
    EXPECT_NE(page.find(fact, card), std::string::npos) << fact;
  EXPECT_NE(page.find("<dt>dlbench</dt><dd>0.1.0 (0123456789ab)</dd>", card), std::string::npos);
  EXPECT_LT(card, page.find("<div id=\"charts\">"));
  EXPECT_NE(page.find("<dt>speedup</dt>"),
            std::string::npos);  // explained where shown  // the headline comes before any detail
  EXPECT_NE(page.find("<p class=\"alert\">1 of 8 runs had their GPU clocks throttled"),
            std::string::npos);
  // The full telemetry table is folded; the machines table is turned on its side, so it fits.
  EXPECT_NE(page.find("<details><summary>Every telemetry metric of every run"), std::string::npos);
  EXPECT_NE(page.find("<table class=\"wrap\">"), std::string::npos);
}

// A build of a modified tree says so on the card, as `dlbench --version` does.
TEST(ReportViewTest, TheCardKeepsTheDirtyMarkOfTheBuild) {
  ReportData d = h100_report();
  d.machines[0].environment["dlbench"]["git_hash"] = "43badaac15ed-dirty";
  EXPECT_NE(html(d).find("<dt>dlbench</dt><dd>0.1.0 (43badaac15ed-dirty)</dd>"), std::string::npos);
}

// A machine with two GPU models lists both, and no size it would have to take from one of them.
TEST(ReportViewTest, MixedGpusAreListedByModel) {
  ReportData d = h100_report();
  json other = d.machines[0].environment["gpus"][0];
  other["name"] = "NVIDIA L40S";
  d.machines[0].environment["gpus"].push_back(other);
  const std::string page = html(d);
  EXPECT_NE(page.find("<dt>GPUs</dt><dd>1x NVIDIA H100 80GB HBM3 + 1x NVIDIA L40S</dd>"),
            std::string::npos)
      << page.substr(page.find("<section"), 800);
}

TEST(ReportViewTest, NumericHeadersSitOverTheirColumns) {
  const std::string page = html(h100_report());
  const std::size_t energy = page.find("<h2>Energy per sample</h2>");
  ASSERT_NE(energy, std::string::npos);
  const std::string part = page.substr(energy, 600);
  EXPECT_NE(part.find("<th class=\"num\">energy J</th><th class=\"num\">samples</th>"
                      "<th class=\"num\">J/sample</th>"),
            std::string::npos)
      << part;
}

TEST(ReportViewTest, CpuOnlyReportDoesNotExplainGpuMetrics) {
  ReportData d;
  d.title = "dlbench report: suite quick-cpu";
  RunRecord r = testing::sample_run("resnet50", 34.8);
  r.precision = "fp32";
  r.device = "cpu";
  r.telemetry = {testing::telemetry("process.cpu", "%", 190, 199)};
  r.samples.clear();
  r.machine.environment = {{"host", {{"cpu_model", "AMD EPYC"}, {"cores", 2}}},
                           {"gpus", json::array()}};
  d.runs = {r};
  d.machines = {r.machine};
  const std::string page = html(d);
  const std::string text = page.substr(0, page.find("<script"));
  for (const char* gpu_only :
       {"kernel busy", "SM activity", "tensor", "GPM", "energy per sample", "throttl", "GPU memory",
        "GPU = ", "power limit", "several GPUs", "<dt>speedup"})
    EXPECT_EQ(text.find(gpu_only), std::string::npos) << gpu_only;
  EXPECT_NE(text.find("<h1>AMD EPYC (2 cores), no GPU</h1>"), std::string::npos);
  EXPECT_NE(text.find("the process's CPU"), std::string::npos);
}

}  // namespace
}  // namespace dlbench::report
