// runs export as tables: the columns people filter on (GPU, framework, replicas, precision by
// its name, ISO time), --wide's one row per run, and benchmark-json for dashboards.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/store/export_table.h"
#include "tests/store/store_test_util.h"

namespace dlbench::store {
namespace {

RunRecord gpu_run(std::int64_t id, const std::string& precision, double throughput) {
  RunRecord r = testing::sample_run("resnet50", throughput);
  r.id = id;
  r.precision = precision;
  r.machine.environment["host"]["cpu_model"] = "AMD EPYC 9654";
  r.machine.environment["gpus"] = {{{"name", "NVIDIA H100 80GB HBM3"}, {"cuda_index", 0}},
                                   {{"name", "NVIDIA H100 80GB HBM3"}, {"cuda_index", 1}}};
  r.result["dlbench"] = {{"version", "0.1.0"}, {"git_hash", "0123456789ab"}};
  r.metrics.push_back({"step_time/median_ms", 157.5, "ms", ""});
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ExportTableTest, LongCsvCarriesTheColumnsPeopleFilterOn) {
  RunRecord r = gpu_run(7, "fp32", 812.5);
  r.device = "2x cuda (threads)";
  r.config["replicas"] = 2;
  std::ostringstream out;
  export_csv({r}, out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 1u + r.metrics.size());
  EXPECT_EQ(lines[0],
            "run_id,created,created_unix_s,status,machine,hostname,cpu_model,gpu_name,gpu_count,"
            "framework,model,mode,precision,precision_name,device,replicas,batch,input_size,suite,"
            "tag,value,unit");
  EXPECT_EQ(lines[1].rfind("7,2026-09-21T14:13:20Z,1790000000,ok,001122334455,box,AMD EPYC 9654,"
                           "NVIDIA H100 80GB HBM3,2,native,resnet50,train,fp32,fp32 (strict),"
                           "2x cuda (threads),2,128,224,,throughput/samples_per_s,812.5,samples/s",
                           0),
            0u)
      << lines[1];
}

TEST(ExportTableTest, WideIsOneRowPerRunWithAColumnPerHeadlineMetric) {
  std::ostringstream out;
  export_csv_wide({gpu_run(2, "fp16", 900), gpu_run(1, "fp32", 450)}, out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find(",suite,throughput/samples_per_s,step_time/median_ms,"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(",fp16,fp16,cuda:0,1,128,224,,900,157.5,160.25,"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(",fp32 (strict),"), std::string::npos) << lines[2];
}

TEST(ExportTableTest, BenchmarkJsonIsWhatGithubActionBenchmarkReads) {
  RunRecord failed = gpu_run(4, "bf16", 0);
  failed.status = "failed";
  std::ostringstream out;
  export_benchmark_json(
      {gpu_run(3, "fp16", 900), gpu_run(2, "fp16", 850), gpu_run(1, "fp32", 450), failed}, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2u) << out.str();  // the newest fp16 run; no failed run
  EXPECT_EQ(doc[0]["name"], "resnet50 train fp16 b128 224px on 1x NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc[0]["unit"], "samples/s");
  EXPECT_EQ(doc[0]["value"], 900);
  EXPECT_NE(doc[0]["extra"].get<std::string>().find("run 3 at 2026-09-21T14:13:20Z"),
            std::string::npos);
  EXPECT_NE(doc[0]["extra"].get<std::string>().find("git 0123456789ab"), std::string::npos);
  EXPECT_NE(doc[0]["extra"].get<std::string>().find("step p50 157.5 ms"), std::string::npos);
  EXPECT_EQ(doc[1]["name"], "resnet50 train fp32 (strict) b128 224px on 1x NVIDIA H100 80GB HBM3");
  for (const auto& entry : doc) EXPECT_EQ(entry.size(), 4u);  // name, unit, value, extra
}

// A 3D model's size is a volume's three sides, not an image's pixels; a language model's is its
// sequence length in tokens.
TEST(ExportTableTest, VolumesAreNamedByTheirThreeSides) {
  RunRecord r = gpu_run(1, "fp16", 75);
  r.model = "unet3d";
  r.batch = 2;
  r.input_size = 128;
  r.result["sample_unit"] = "volumes";
  EXPECT_EQ(r.input_size_text(), "128x128x128");
  std::ostringstream out;
  export_benchmark_json({r}, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  ASSERT_EQ(doc.size(), 1u) << out.str();
  EXPECT_EQ(doc[0]["name"], "unet3d train fp16 b2 128x128x128 on 1x NVIDIA H100 80GB HBM3");
  r.result["sample_unit"] = "images";
  EXPECT_EQ(r.input_size_text(), "128px");
  r.result["sample_unit"] = "sequences";  // BERT's size is a sequence length
  EXPECT_EQ(r.input_size_text(), "128 tok");
  r.result["sample_unit"] = "pairs";  // the Transformer's sentence pairs: a length too
  EXPECT_EQ(r.input_size_text(), "128 tok");
  r.result.erase("sample_unit");  // stored before runs said their unit: images
  EXPECT_EQ(r.input_size_text(), "128px");
  r.input_size = 0;
  EXPECT_EQ(r.input_size_text(), "");
}

TEST(ExportTableTest, CpuRunsNameTheCpu) {
  RunRecord r = gpu_run(1, "fp32", 30);
  r.device = "cpu";
  const RunColumns c = run_columns(r);
  EXPECT_EQ(c.gpu_count, 0);
  EXPECT_EQ(c.gpu_name, "");
  EXPECT_EQ(c.hardware, "AMD EPYC 9654 (CPU)");
}

}  // namespace
}  // namespace dlbench::store
