// dlbench run end to end on the CPU: a tiny real run, its JSON, and every bad value a user
// may type getting a one-line error with the right exit code.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/json_text.h"
#include "tests/support/isolated_home.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

// --no-store: the tests must not write into the user's results database.
const char* kTiny =
    "run resnet50 --device cpu --input 32 --batch 2 --steps 2 --warmup 1 --no-store";

TEST(RunCliTest, TinyTrainingRunReportsThroughputAndLoss) {
  auto r = dlbench(kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* label : {"Throughput", "images/s", "Step time", "Parameters", "Loss", "Memory"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label << "\n" << r.out;
}

// A translation model counts sentence pairs and the tokens they hold, padding left out, from the
// first measured step (no warm-up here), and names its size as a length (the full
// Transformer-big scoring one pair at the shortest length: training's step is in the model test).
TEST(RunCliTest, TheTransformerCountsPairsAndTokensAndNamesItsLength) {
  const std::string path = ::testing::TempDir() + "dlbench-transformer-run.json";
  std::remove(path.c_str());
  auto r = dlbench(
      "run transformer --device cpu --mode infer --input 32 --batch 1 --steps 1 --warmup 0 "
      "--no-store --no-telemetry --json " +
      path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* shown : {"transformer infer fp32 on cpu, batch 1, length 32 tokens", "pairs/s",
                            "tokens/s: source and target tokens", "209125376"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
  // Stored as the model's tokens/s, the one metric reports show for every language model.
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  const json doc = json::parse(in);
  double tokens_per_s = 0;
  for (const json& m : doc["metrics"])
    if (m["tag"] == "throughput/tokens_per_s") tokens_per_s = m["value"].get<double>();
  EXPECT_GT(tokens_per_s, 0.0);
  std::remove(path.c_str());
}

TEST(RunCliTest, JsonFileHoldsTheResultAndEnvironment) {
  std::string path = ::testing::TempDir() + "dlbench-run-test.json";
  std::remove(path.c_str());
  auto r = dlbench(std::string(kTiny) + " --mode infer --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  json doc = json::parse(in);
  EXPECT_EQ(doc["schema"], "dlbench.run/1");
  EXPECT_EQ(doc["config"]["model"], "resnet50");
  EXPECT_EQ(doc["config"]["mode"], "infer");
  EXPECT_EQ(doc["config"]["batch"], 2);
  EXPECT_EQ(doc["measured_steps"], 2);
  EXPECT_GT(doc["throughput_samples_per_s"].get<double>(), 0.0);
  // Throughput is samples over the measured wall time, not a mean of per-step rates.
  EXPECT_NEAR(doc["throughput_samples_per_s"].get<double>(),
              2.0 * 2 / doc["measured_seconds"].get<double>(), 1e-6);
  EXPECT_TRUE(doc["environment"]["host"].is_object());
  bool has_throughput_metric = false;
  for (const json& m : doc["metrics"])
    has_throughput_metric |= m["tag"] == "throughput/samples_per_s";
  EXPECT_TRUE(has_throughput_metric);
  std::remove(path.c_str());
}

// The start-up is measured and said apart from the throughput: building, the warm-up and its
// first step, each a stored metric; with no warm-up there is no warm-up to time.
TEST(RunCliTest, StartUpIsReportedApartFromTheThroughput) {
  std::string path = ::testing::TempDir() + "dlbench-start-up.json";
  const std::string run =
      "run resnet50 --device cpu --input 32 --batch 2 --steps 2 --no-store --json " + path;
  auto r = dlbench(run + " --warmup 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Start-up          built in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(first step "), std::string::npos) << r.out;
  std::map<std::string, double> startup;
  const json doc = json::parse(testing::read_file(path));
  for (const json& m : doc["metrics"])
    if (const std::string tag = m["tag"].get<std::string>(); tag.rfind("startup/", 0) == 0)
      startup[tag] = m["value"].get<double>();
  ASSERT_EQ(startup.count("startup/build_seconds"), 1u);
  ASSERT_EQ(startup.count("startup/warmup_seconds"), 1u);
  ASSERT_EQ(startup.count("startup/first_step_seconds"), 1u);
  EXPECT_GT(startup["startup/build_seconds"], 0);
  EXPECT_GT(startup["startup/first_step_seconds"], 0);
  EXPECT_LE(startup["startup/first_step_seconds"], startup["startup/warmup_seconds"]);
  // The CPU chooses no algorithm by measuring: no planning parts are made up.
  EXPECT_EQ(startup.count("startup/planning_seconds"), 0u);

  auto cold = dlbench(run + " --warmup 0");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const std::size_t row = cold.out.find("Start-up");
  ASSERT_NE(row, std::string::npos) << cold.out;
  EXPECT_EQ(cold.out.substr(row, cold.out.find('\n', row) - row).find("warm-up"), std::string::npos)
      << cold.out;
  const json cold_doc = json::parse(testing::read_file(path));
  for (const json& m : cold_doc["metrics"]) EXPECT_NE(m["tag"], "startup/warmup_seconds");
  std::remove(path.c_str());
}

// One measured step has no spread: its CV is "n/a", not a reassuring 0.0 %; counts take the
// singular; the learning rate is stored as typed (0.001, not the float widened).
TEST(RunCliTest, OneStepSaysSoAndTheConfigReadsAsTyped) {
  std::string path = ::testing::TempDir() + "dlbench-one-step.json";
  auto r = dlbench(
      "run resnet50 --device cpu --input 32 --batch 2 --steps 1 --warmup 1 --no-store --json " +
      path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CV n/a: one step"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CV 0.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 step in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("after 1 warm-up step\n"), std::string::npos) << r.out;
  const std::string text = testing::read_file(path);
  EXPECT_NE(text.find("\"learning_rate\": 0.001,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"momentum\": 0.9,"), std::string::npos) << text;
  const json doc = json::parse(text);
  EXPECT_FALSE(doc["step_time_ms"].contains("cv"));
  for (const json& m : doc["metrics"]) EXPECT_NE(m["tag"], "step_time/cv");
  std::remove(path.c_str());
}

// Class weights reach the cross-entropy (the same seed's first loss differs from the unweighted
// run's) and the stored configuration, as given.
TEST(RunCliTest, ClassWeightsWeighTheLossAndAreStored) {
  const std::string plain_path = ::testing::TempDir() + "dlbench-unweighted.json";
  const std::string path = ::testing::TempDir() + "dlbench-class-weights.json";
  const std::string run =
      "run unet --device cpu --input 32 --batch 1 --steps 1 --warmup 0 --no-store --no-telemetry";
  auto plain = dlbench(run + " --json " + plain_path);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto r = dlbench(run + " --class-weights 0.5,2,4 --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(testing::read_file(path));
  const json unweighted = json::parse(testing::read_file(plain_path));
  EXPECT_EQ(dump_json(doc["config"]["class_weights"]), "[0.5,2.0,4.0]");
  EXPECT_FALSE(unweighted["config"].contains("class_weights"));
  EXPECT_GT(doc["loss"]["first"].get<double>(), 0.0);  // weights that never arrived weigh 0
  EXPECT_NE(doc["loss"]["first"].get<double>(), unweighted["loss"]["first"].get<double>());
  EXPECT_NE(r.out.find("Class weights     0.5, 2, 4 (classes 0 to 2;"), std::string::npos) << r.out;
  EXPECT_EQ(plain.out.find("Class weights"), std::string::npos) << plain.out;
  std::remove(path.c_str());
  std::remove(plain_path.c_str());
}

// A machine without GPUs asked for one: "1 GPU", not "1 GPUs".
TEST(RunCliTest, OneGpuIsSingular) {
  auto r = dlbench(
      "run resnet50 --gpus 1 --input 32 --batch 1 --steps 1 --warmup 0 --no-store "
      "--no-telemetry");
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("asks for 1 GPU;"), std::string::npos) << r.err;
}

TEST(RunCliTest, LayersTableShowsWhereTheWorkIs) {
  auto r = dlbench(
      "run vgg16 --device cpu --input 32 --batch 2 --steps 1 --warmup 0 --mode infer "
      "--no-telemetry --layers");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Layers (forward MACs per batch)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conv13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fc3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Telemetry"), std::string::npos) << "--no-telemetry still sampled";
}

// A file's identity and last change, to tell whether a command wrote it.
std::string file_state(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "absent";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// A run without --no-store and without --db stores into the test process's temporary home
// (tests/support/isolated_home.h), never into the user's own database.
TEST(RunCliTest, StoredRunLandsInTheTestHomeNotTheUsers) {
  const std::string test_db = testing::isolated_home() + "/.local/share/dlbench/results.db";
  ASSERT_EQ(std::getenv("XDG_DATA_HOME"), testing::isolated_home() + "/.local/share");
  ASSERT_NE(testing::isolated_home().rfind("/dlbench-test-home-"), std::string::npos);
  const std::string user_db = testing::user_data_home() + "/dlbench/results.db";
  ASSERT_NE(user_db, test_db);
  const std::string user_before = file_state(user_db);
  // Other tests in this process may have stored runs in the same test home already: count them.
  auto stored_runs = [] {
    auto list = dlbench("--json runs list");
    EXPECT_EQ(list.exit_code, 0) << list.err;
    return list.exit_code == 0 ? json::parse(list.out)["runs"] : json::array();
  };
  const size_t runs_before = std::filesystem::exists(test_db) ? stored_runs().size() : 0;
  auto r = dlbench(
      "run vgg16 --device cpu --input 32 --batch 2 --steps 1 --warmup 0 --mode infer "
      "--no-telemetry");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(" in SQLite " + test_db), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::exists(test_db));
  json runs = stored_runs();
  ASSERT_EQ(runs.size(), runs_before + 1);
  const json& newest = runs[0]["id"] > runs.back()["id"] ? runs[0] : runs.back();
  EXPECT_EQ(newest["model"], "vgg16");
  EXPECT_NE(
      r.err.find("stored as run " + std::to_string(newest["id"].get<long long>()) + " in SQLite"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(file_state(user_db), user_before) << "the user's database at " << user_db << " changed";
}

struct BadValue {
  const char* args;
  int exit_code;
  const char* message;
};

class RunBadValueTest : public ::testing::TestWithParam<BadValue> {};

TEST_P(RunBadValueTest, GivesAOneLineErrorAndExitCode) {
  const BadValue& b = GetParam();
  auto r = dlbench(b.args);
  EXPECT_EQ(r.exit_code, b.exit_code) << r.err;
  EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: "), std::string::npos) << r.err;
  int lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_LE(lines, 2) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Run, RunBadValueTest,
    ::testing::Values(
        BadValue{"run resnet50 --device cpu --batch 0", 2, "--batch must be from 1 to"},
        BadValue{"run resnet50 --device cpu --batch -3", 2, "--batch must be from 1 to"},
        BadValue{"run resnet51 --device cpu", 2, "unknown model 'resnet51'"},
        BadValue{"run resnet50 --device cpu --precision fp8", 2, "unknown precision 'fp8'"},
        BadValue{"run resnet50 --device cpu --precision fp16", 2, "needs a GPU backend"},
        BadValue{"run resnet50 --device gpu0", 2, "unknown device 'gpu0'"},
        BadValue{"run resnet50 --device cpu --mode learn", 2, "--mode must be train or infer"},
        BadValue{"run resnet50 --device cpu --steps 0", 2, "--steps must be from 1 to"},
        BadValue{"run resnet50 --device cpu --input 100", 2, "--input of resnet50 must be one of"},
        // Sizes whose memory cannot be represented are usage errors, never a crash (issue 15).
        BadValue{"run vgg16 --device cpu --input 32 --mode infer --batch 4611686018427387904", 2,
                 "--batch must be from 1 to 16777216"},
        BadValue{"run vgg16 --device cpu --input 32 --mode infer --batch 9223372036854775807", 2,
                 "--batch must be from 1 to 16777216"},
        BadValue{"run vgg16 --device cpu --input 32 --batch 99999999999999999999", 2, "--batch"},
        // One that can be represented but does not fit is a resource error.
        BadValue{"run vgg16 --device cpu --input 32 --mode infer --batch 16777216", 3,
                 "out of host memory"},
        // Numbers: finite, in range, no wrapping or truncation.
        BadValue{"run vgg16 --device cpu --input 32 --seconds inf", 2,
                 "--seconds must be a finite"},
        BadValue{"run vgg16 --device cpu --input 32 --seconds 1e309", 2, "--seconds must be"},
        BadValue{"run vgg16 --device cpu --input 32 --seconds nan", 2, "--seconds must be"},
        BadValue{"run vgg16 --device cpu --input 32 --seconds -1", 2, "--seconds must be"},
        BadValue{"run vgg16 --device cpu --input 32 --lr inf", 2, "--lr must be a finite"},
        BadValue{"run vgg16 --device cpu --input 32 --lr nan", 2, "--lr must be a finite"},
        BadValue{"run vgg16 --device cpu --input 32 --momentum 1", 2, "--momentum must be"},
        // Class weights: numbers, one per class, not negative, not all 0, segmenters only.
        BadValue{"run unet --device cpu --input 32 --class-weights 1,x,1", 2,
                 "--class-weights must be numbers separated by commas"},
        BadValue{"run unet --device cpu --input 32 --class-weights 1,,1", 2,
                 "--class-weights must be numbers"},
        BadValue{"run unet --device cpu --input 32 --class-weights 1,2", 2,
                 "takes 3 class weights, not 2"},
        BadValue{"run unet --device cpu --input 32 --class-weights 0,0,0", 2,
                 "--class-weights must not all be 0"},
        BadValue{"run unet --device cpu --input 32 --class-weights 1,-1,1", 2,
                 "--class-weights must be finite numbers >= 0"},
        BadValue{"run unet --device cpu --input 32 --class-weights 1,nan,1", 2,
                 "--class-weights must be finite numbers >= 0"},
        BadValue{"run vgg16 --device cpu --input 32 --class-weights 1,2", 2,
                 "--class-weights is for the segmentation models"},
        BadValue{"run unet --device cpu --input 32 --class-weights ''", 2, "an empty value"},
        BadValue{"run vgg16 --device cpu --input 32 --bucket-mb 1e309", 2, "--bucket-mb must be"},
        BadValue{"run vgg16 --device cpu --input 32 --bucket-mb 0", 2, "--bucket-mb must be"},
        BadValue{"run vgg16 --device cpu --input 32 --seed -1", 2, "--seed must not be negative"},
        BadValue{"run vgg16 --device cpu --input 32 --steps 4294967297", 2, "--steps"},
        BadValue{"run vgg16 --device cpu --input 4294967328", 2, "--input"},
        BadValue{"run vgg16 --device cpu --input 32 --interval inf --no-telemetry", 2,
                 "sampling interval"},
        BadValue{"run vgg16 --device cpu --input 32 --warmup -1", 2, "--warmup must be from 0"},
        // An empty value is an error, never the default (an unset shell variable).
        BadValue{"run vgg16 --device cpu --input 32 --batch ''", 2, "an empty value"},
        BadValue{"run vgg16 --device cpu --input ''", 2, "an empty value"},
        BadValue{"run vgg16 --device cpu --input 0", 2, "--input must be a positive size"},
        BadValue{"run vgg16 --device '' --input 32", 2, "an empty value"},
        BadValue{"--db '' run vgg16 --device cpu --input 32", 2, "an empty value"},
        BadValue{"run vgg16 --device cpu --input 32 --framework ''", 2, "an empty value"},
        BadValue{"run resnet50 --device cuda:7 --input 32 --batch 2", 3, "cuda:7"},
        BadValue{"run resnet50 --device cpu --json /nonexistent/dir/out.json", 3, "cannot write"},
        BadValue{"run", 2, "model is required"}),
    [](const ::testing::TestParamInfo<BadValue>& info) {
      return "case" + std::to_string(info.index);
    });

}  // namespace
}  // namespace dlbench
