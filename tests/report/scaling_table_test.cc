// The report's multi-GPU scaling: which stored runs form a scaling group, the base each is
// measured against, speedup and efficiency (checked against the runner's definition), the
// tables every format prints, and the HTML section with its chart. Runs are made up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "bench/report/charts.h"
#include "bench/report/html_report.h"
#include "bench/report/scaling_table.h"
#include "bench/report/table_formats.h"
#include "tests/store/store_test_util.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

std::int64_t next_id = 0;

RunRecord run(int replicas, double throughput, const std::string& launch = "threads") {
  RunRecord r = testing::sample_run("resnet50", throughput);
  r.id = ++next_id;
  r.device = replicas > 1 ? std::to_string(replicas) + "x cuda (" + launch + ")" : "cuda:0";
  r.machine.id = 1;
  r.result = {{"schema", "dlbench.run/1"}, {"measured_seconds", 2.0}};
  if (replicas > 1) {
    r.config["replicas"] = replicas;
    r.config["global_batch"] = 128 * replicas;
    r.config["launch"] = launch;
    r.result["data_parallel"] = {
        {"replicas", replicas},           {"launch", launch},
        {"communicator", "nccl 2.28.3"},  {"interconnect", "NVLink 4 x18"},
        {"global_batch", 128 * replicas}, {"buckets", 4},
        {"replicas_identical", true},     {"replica_seconds", json::array()}};
  }
  return r;
}

TEST(ScalingTableTest, ReadsReplicasAndLaunchFromTheResultOrConfig) {
  EXPECT_EQ(run_replicas(run(1, 100)), 1);
  EXPECT_EQ(run_launch(run(1, 100)), "single");
  EXPECT_EQ(run_replicas(run(4, 100)), 4);
  EXPECT_EQ(run_launch(run(2, 100, "mpi")), "mpi");
  RunRecord config_only = run(2, 100);
  config_only.result.erase("data_parallel");
  EXPECT_EQ(run_replicas(config_only), 2);
  EXPECT_EQ(run_launch(config_only), "threads");
}

TEST(ScalingTableTest, GroupsOneWorkloadAtSeveralCountsAgainstTheSmallest) {
  std::vector<RunRecord> runs = {run(1, 1000), run(2, 1900), run(4, 3600)};
  std::vector<ScalingGroup> groups = scaling_groups(runs);
  ASSERT_EQ(groups.size(), 1u);
  const ScalingGroup& g = groups[0];
  EXPECT_EQ(g.workload, "ResNet-50 train FP16 (mixed) b128 224px");
  EXPECT_EQ(g.device, "cuda");
  EXPECT_EQ(g.machine, "CPU (8 cores), no GPU");  // what it is, not its host name
  EXPECT_EQ(g.base_replicas, 1);
  ASSERT_EQ(g.rows.size(), 3u);
  EXPECT_EQ(g.rows[0].launch, "single");
  EXPECT_EQ(g.rows[0].global_batch, 128);
  EXPECT_FALSE(g.rows[0].replicas_identical);
  EXPECT_EQ(g.rows[2].replicas, 4);
  EXPECT_EQ(g.rows[2].global_batch, 512);
  EXPECT_DOUBLE_EQ(g.rows[2].speedup, 3.6);
  EXPECT_DOUBLE_EQ(g.rows[2].efficiency, 0.9);
  EXPECT_EQ(g.rows[2].replicas_identical, std::optional<bool>(true));
  EXPECT_EQ(g.rows[2].interconnect, "NVLink 4 x18");
}

TEST(ScalingTableTest, LeavesOutSingleCountsOtherWorkloadsAndFailedRuns) {
  RunRecord other_batch = run(2, 1500);
  other_batch.batch = 64;
  RunRecord other_machine = run(2, 1500);
  other_machine.machine.id = 2;
  RunRecord cpu_mpi = run(2, 30, "mpi");
  cpu_mpi.device = "2x cpu (mpi)";
  RunRecord failed = run(4, 0);
  failed.status = "failed";
  RunRecord fp32 = run(1, 500);
  fp32.precision = "fp32";
  // Each of these has a partner at another count only in a different workload.
  std::vector<RunRecord> runs = {run(1, 1000), other_batch, other_machine, cpu_mpi, failed, fp32};
  EXPECT_TRUE(scaling_groups(runs).empty());

  RunRecord cpu_single = run(1, 16);
  cpu_single.device = "cpu";
  runs.push_back(cpu_single);
  std::vector<ScalingGroup> groups = scaling_groups(runs);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].device, "cpu");
  EXPECT_DOUBLE_EQ(groups[0].rows[1].efficiency, 30.0 / 2 / 16);
}

TEST(ScalingTableTest, ThreadAndMpiRunsAtOneCountAreBothRowsAndTheNewestRunWins) {
  std::vector<RunRecord> runs = {run(2, 1800, "mpi"), run(2, 1700), run(4, 3000), run(4, 3400),
                                 run(8, 6000, "mpi")};
  std::vector<ScalingGroup> groups = scaling_groups(runs);
  ASSERT_EQ(groups.size(), 1u);
  const ScalingGroup& g = groups[0];
  // Without a 1-GPU run the base is the 2-GPU thread run, not the faster mpi one.
  EXPECT_EQ(g.base_replicas, 2);
  EXPECT_DOUBLE_EQ(g.base_throughput, 1700);
  ASSERT_EQ(g.rows.size(), 4u);
  EXPECT_EQ(g.rows[0].launch, "threads");
  EXPECT_EQ(g.rows[1].launch, "mpi");
  EXPECT_DOUBLE_EQ(g.rows[2].throughput, 3400);  // the newer of the two 4-GPU runs
  EXPECT_DOUBLE_EQ(g.rows[3].efficiency, (6000.0 / 8) / (1700.0 / 2));
}

TEST(ScalingTableTest, TablesShowEveryColumnInEveryFormat) {
  RunRecord different = run(4, 3600);
  different.result["data_parallel"]["replicas_identical"] = false;
  // Three steps of 40 ms on every replica but the second step's 55 ms on one.
  for (int r = 0; r < 4; ++r)
    different.result["data_parallel"]["replica_steps"].push_back(
        {{"start_ms", {0.0, 40.0, 95.0}}, {"ms", {40.0, r == 3 ? 55.0 : 54.0, 40.0}}});
  ReportData data;
  data.title = "t";
  data.runs = {run(1, 1000), run(2, 1900), different};
  std::vector<Table> tables = report_tables(data);
  auto it =
      std::find_if(tables.begin(), tables.end(), [](const Table& t) { return t.id == "scaling"; });
  ASSERT_NE(it, tables.end());
  EXPECT_EQ(it->columns,
            (std::vector<std::string>{"replicas", "launch", "global batch", "samples/s", "speedup",
                                      "efficiency %", "slow steps", "replicas identical",
                                      "interconnect", "run"}));
  ASSERT_EQ(it->rows.size(), 3u);
  EXPECT_EQ(it->rows[0][6], "-");  // one replica
  EXPECT_EQ(it->rows[0][7], "-");
  EXPECT_EQ(it->rows[1][4], "1.90x");
  EXPECT_EQ(it->rows[1][5], "95.0");
  EXPECT_EQ(it->rows[1][6], "");  // stored without replica steps
  EXPECT_EQ(it->rows[2][6], "1/3");
  EXPECT_EQ(it->rows[2][7], "no");

  std::ostringstream md, js;
  write_tables(data.title, tables, TableFormat::kMarkdown, md);
  EXPECT_NE(md.str().find("## Multi-GPU scaling: ResNet-50 train FP16 (mixed) b128 224px"),
            std::string::npos);
  write_tables(data.title, tables, TableFormat::kJson, js);
  bool found = false;
  const json doc = json::parse(js.str());
  for (const json& t : doc["tables"])
    if (t["id"] == "scaling") {
      found = true;
      EXPECT_EQ(t["rows"][2]["efficiency %"], 90.0);  // a number stays a number
      EXPECT_EQ(t["rows"][2]["interconnect"], "NVLink 4 x18");
    }
  EXPECT_TRUE(found);
}

TEST(ScalingTableTest, HtmlHasTheSectionAndItsChartTargetsIt) {
  ReportData data;
  data.title = "t";
  data.runs = {run(1, 1000), run(2, 1900), run(4, 3600), run(4, 3500, "mpi")};
  json charts = report_charts(data);
  ASSERT_FALSE(charts.empty());
  const json& c = charts[0];
  EXPECT_EQ(c["section"], "Multi-GPU scaling");
  EXPECT_EQ(c["target"], scaling_chart_target(0));
  EXPECT_EQ(c["y2Unit"], "scaling efficiency %");
  std::vector<std::string> labels;
  for (const json& d : c["datasets"]) labels.push_back(d["label"]);
  EXPECT_EQ(labels, (std::vector<std::string>{"samples/s, one process", "samples/s, mpi",
                                              "ideal (linear from 1)", "efficiency %, one process",
                                              "efficiency %, mpi"}));
  const json& ideal = c["datasets"][2]["data"];
  ASSERT_EQ(ideal.size(), 3u);
  EXPECT_DOUBLE_EQ(ideal[2]["y"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(c["datasets"][3]["data"][2]["y"].get<double>(), 90);

  std::ostringstream html;
  write_html(data, html);
  const std::string page = html.str();
  EXPECT_NE(page.find("<h2>Multi-GPU scaling</h2>"), std::string::npos);
  EXPECT_NE(page.find("id=\"" + scaling_chart_target(0) + "\""), std::string::npos);
  // Its table is in the section only, not again among the other tables.
  const char* heading = "<h3>Multi-GPU scaling: ";
  std::size_t first = page.find(heading);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(page.find("Multi-GPU scaling: ", first + std::strlen(heading)), std::string::npos);
}

TEST(ScalingTableTest, NoSectionWithoutSeveralCounts) {
  ReportData data;
  data.title = "t";
  data.runs = {run(1, 1000), run(1, 1100)};
  std::ostringstream html;
  write_html(data, html);
  EXPECT_EQ(html.str().find("Multi-GPU scaling"), std::string::npos);
  for (const Table& t : report_tables(data)) EXPECT_NE(t.id, "scaling");
}

}  // namespace
}  // namespace dlbench::report
