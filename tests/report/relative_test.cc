// report --relative-to: ratios per workload and their geometric mean on made-up runs (exact
// arithmetic), the workloads the reference lacks, and how REF is resolved.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/report/relative.h"
#include "bench/report/relative_view.h"
#include "engine/core/error.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using testing::sample_run;

store::RunRecord run(const std::string& model, const std::string& precision, double throughput,
                     std::int64_t when = 1'790'000'000) {
  store::RunRecord r = sample_run(model, throughput);
  r.precision = precision;
  r.created_unix_s = when;
  return r;
}

TEST(RelativeTest, RatiosAndTheirGeometricMean) {
  report::Reference ref{"ref",
                        {run("resnet50", "fp16", 1000), run("resnet50", "fp32", 400),
                         run("vgg16", "fp16", 250), run("bert", "fp16", 10)}};
  // 2x, 0.5x and 4x: the geometric mean is (2 * 0.5 * 4)^(1/3) = 4^(1/3).
  std::vector<store::RunRecord> mine = {run("resnet50", "fp16", 2000), run("resnet50", "fp32", 200),
                                        run("vgg16", "fp16", 1000), run("unet", "fp16", 5)};
  const report::RelativePerformance rel = report::relative_performance(mine, ref);
  ASSERT_EQ(rel.rows.size(), 3u);
  EXPECT_EQ(rel.rows[0].workload, "resnet50 train fp16 b128 224px");
  EXPECT_DOUBLE_EQ(rel.rows[0].ratio, 2.0);
  EXPECT_DOUBLE_EQ(rel.rows[1].ratio, 0.5);
  EXPECT_DOUBLE_EQ(rel.rows[2].ratio, 4.0);
  EXPECT_DOUBLE_EQ(rel.rows[2].reference, 250);
  EXPECT_NEAR(rel.geometric_mean, std::cbrt(4.0), 1e-12);
  EXPECT_EQ(rel.unmatched, std::vector<std::string>{"unet train fp16 b128 224px"});
  EXPECT_EQ(rel.reference_machine, "test CPU, 1x test GPU");

  const report::Table t = report::relative_table(rel);
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[3], (std::vector<std::string>{"geometric mean", "", "", "1.59"}));
  EXPECT_EQ(t.rows[4][2], "no reference run");
  const nlohmann::json chart = report::relative_chart(rel);
  EXPECT_EQ(chart["labels"].size(), 3u);
  EXPECT_EQ(chart["datasets"][0]["data"][2], 4.0);
  EXPECT_EQ(chart["datasets"][1]["type"], "line");
}

// The same workload at another batch, input size, framework or replica count has no counterpart;
// the newest completed run of a workload counts, on either side; failed runs do not.
TEST(RelativeTest, OnlyTheSameWorkloadConfigurationMatches) {
  store::RunRecord b64 = run("resnet50", "fp16", 100), px32 = b64, peer = b64, x2 = b64;
  b64.batch = 64;
  px32.input_size = 32;
  peer.framework = "pytorch";
  x2.result["data_parallel"] = {{"replicas", 2}};
  store::RunRecord failed = run("resnet50", "fp16", 1, 1'790'000'100);
  failed.status = "failed";
  report::Reference ref{"ref",
                        {b64, px32, peer, x2, run("resnet50", "fp16", 100),
                         run("resnet50", "fp16", 50, 1'790'000'050), failed}};
  std::vector<store::RunRecord> mine = {run("resnet50", "fp16", 300),
                                        run("resnet50", "fp16", 200, 1'790'000'060)};
  const report::RelativePerformance rel = report::relative_performance(mine, ref);
  ASSERT_EQ(rel.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rel.rows[0].ratio, 4.0);  // newest 200 / newest completed 50
  EXPECT_DOUBLE_EQ(rel.geometric_mean, 4.0);
  EXPECT_NE(report::workload_configuration(b64), report::workload_configuration(px32));
  EXPECT_NE(report::workload_configuration(peer), report::workload_configuration(x2));
}

// Beam search is another workload than greedy decoding of the same sentences: a beam of 5 does
// about five times the work per sentence.
TEST(RelativeTest, ABeamSearchIsNotTheGreedyWorkload) {
  store::RunRecord greedy = run("gnmt", "fp16", 100), beam5, odd;
  greedy.mode = "infer";
  greedy.input_size = 0;  // no size shown: the key is short
  beam5 = odd = greedy;
  beam5.config["beam"] = 5;
  odd.config["beam"] = "5";  // not a number: as if greedy
  EXPECT_EQ(report::workload_configuration(beam5), "gnmt infer fp16 b128 beam 5");
  EXPECT_EQ(report::workload_configuration(greedy), "gnmt infer fp16 b128");
  EXPECT_EQ(report::workload_configuration(odd), report::workload_configuration(greedy));
  const report::RelativePerformance rel = report::relative_performance({beam5}, {"ref", {greedy}});
  EXPECT_TRUE(rel.rows.empty());
  EXPECT_EQ(rel.unmatched, std::vector<std::string>{"gnmt infer fp16 b128 beam 5"});
}

TEST(RelativeTest, NoCounterpartAtAllHasNoMean) {
  const report::RelativePerformance rel =
      report::relative_performance({run("ncf", "fp32", 10)}, {"ref", {run("bert", "fp32", 1)}});
  EXPECT_TRUE(rel.rows.empty());
  EXPECT_TRUE(std::isnan(rel.geometric_mean));
  EXPECT_EQ(report::relative_table(rel).rows.size(), 1u);
}

TEST(RelativeTest, ReferenceByMachineShippedNameOrRefusal) {
  const std::string dir = testing::temp_folder("relative-ref");
  auto s = store::open_store(dir + "/r.db");
  s->save_run(run("resnet50", "fp16", 100));
  store::RunRecord other = run("resnet50", "fp16", 300);
  other.machine.fingerprint = "00112299";  // shares the prefix 0011 with the sample machine
  other.machine.hostname = "other";
  s->save_run(other);
  EXPECT_EQ(report::load_reference(*s, "other").runs.size(), 1u);
  EXPECT_DOUBLE_EQ(report::load_reference(*s, "other").runs[0].throughput, 300);
  EXPECT_EQ(report::load_reference(*s, "h100-sxm-80gb").runs.size(), 16u);
  try {
    report::load_reference(*s, "0011");
    ADD_FAILURE() << "an ambiguous prefix was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("other"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("box"), std::string::npos) << e.what();
  }
  try {
    report::load_reference(*s, "rtx-8000");
    ADD_FAILURE() << "an unknown reference was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.hint().find("dlbench runs list"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("h100-sxm-80gb"), std::string::npos) << e.hint();
  }
}

}  // namespace
}  // namespace dlbench
