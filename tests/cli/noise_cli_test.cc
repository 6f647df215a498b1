// Noise warnings and --repeat end to end on the CPU (issue 18, item 7): a short run says it is
// short, in the terminal and in its JSON; --repeat 3 prints the median and the spread and stores
// every repeat; a bad --repeat is refused in one line before anything is created; compare of
// two repeated runs gives the ratio with its uncertainty; a suite takes repeat = N.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/isolated_home.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
namespace fs = std::filesystem;

// VGG16 inference at batch 1 on 32x32 inputs: the quickest real run there is.
const std::string kQuick =
    "run vgg16 --device cpu --input 32 --mode infer --batch 1 --warmup 0 --interval 0.1";

std::string fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("dlbench-noise-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

json stored_run(const std::string& db, int id) {
  auto r = dlbench("--db " + db + " runs show " + std::to_string(id) + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(NoiseCliTest, ThreeStepRunWarnsOfFewSteps) {
  const std::string dir = fresh_folder("few");
  const std::string path = dir + "/run.json";
  auto r = dlbench(kQuick + " --steps 3 --no-store --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  Warning "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only 3 measured steps, fewer than 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[few-steps]"), std::string::npos) << r.out;
  // Next to the number: the warnings come right after the throughput and step-time rows.
  EXPECT_LT(r.out.find("Throughput"), r.out.find("[few-steps]"));
  EXPECT_LT(r.out.find("[few-steps]"), r.out.find("Achieved"));
  const json doc = json::parse(testing::read_file(path));
  ASSERT_TRUE(doc["warnings"].is_array());
  bool few = false;
  for (const json& w : doc["warnings"])
    few |= w["code"] == "few-steps" && w["text"].get<std::string>().find("only 3") == 0;
  EXPECT_TRUE(few) << testing::read_file(path);
  EXPECT_FALSE(doc.contains("repeats"));
}

TEST(NoiseCliTest, RepeatThreePrintsTheMedianAndStoresEveryRepeat) {
  const std::string db = fresh_folder("repeat") + "/r.db";
  auto r = dlbench("--db " + db + " " + kQuick + " --steps 2 --repeat 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" images/s (median of 3 repeats)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  Repeats "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% of the median"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", stddev "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("repeat 3/3"), std::string::npos) << "progress names the repeat\n" << r.err;
  const json run = stored_run(db, 1);
  const json& repeats = run["result"]["repeats"];
  ASSERT_TRUE(repeats.is_object()) << "no repeats stored";
  std::vector<double> rates = repeats["throughputs_samples_per_s"].get<std::vector<double>>();
  ASSERT_EQ(rates.size(), 3u);
  for (double v : rates) EXPECT_GT(v, 0);
  // The stored throughput is the median of the three, and the repeats' range is stored too.
  std::sort(rates.begin(), rates.end());
  // (The column and the JSON text may differ in the last bits of the decimal.)
  EXPECT_NEAR(run["throughput_samples_per_s"].get<double>(), rates[1], 1e-9 * rates[1]);
  EXPECT_EQ(run["config"]["repeat"], 3);
  std::vector<std::string> tags;
  for (const json& m : run["metrics"]) tags.push_back(m["tag"]);
  for (const char* tag : {"throughput/repeats", "throughput/repeat_min_samples_per_s",
                          "throughput/repeat_max_samples_per_s", "throughput/repeat_range"})
    EXPECT_NE(std::find(tags.begin(), tags.end(), tag), tags.end()) << tag;
}

TEST(NoiseCliTest, BadRepeatIsRefusedInOneLineBeforeAnythingIsCreated) {
  const std::string dir = fresh_folder("bad");
  for (const char* bad : {"0", "x", "101", "1.5", "-2"}) {
    auto r = dlbench("--db " + dir + "/r.db " + kQuick + " --steps 1 --repeat " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.err;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(first.rfind("dlbench: --repeat must be", 0), 0u) << first;
    EXPECT_NE(first.find("from 1 to 100"), std::string::npos) << first;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_FALSE(fs::exists(dir + "/r.db")) << bad << " created the database";
  }
}

TEST(NoiseCliTest, CompareOfRepeatedRunsShowsTheUncertainty) {
  const std::string db = fresh_folder("compare") + "/r.db";
  for (const char* repeat : {"2", "2", "1"})
    ASSERT_EQ(dlbench("-q --db " + db + " " + kQuick + " --steps 2 --repeat " + repeat).exit_code,
              0);
  auto both = dlbench("--db " + db + " compare 1 2");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("x \xC2\xB1 "), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("A repeats"), std::string::npos) << both.out;
  auto one = dlbench("--db " + db + " compare 1 3");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("x \xC2\xB1 "), std::string::npos) << "B has no repeats\n" << one.out;
  // JSON keeps the numbers as numbers and the ratio with its uncertainty as text.
  const json doc = json::parse(dlbench("--db " + db + " --json compare 1 2").out);
  const json& row = doc["tables"][0]["rows"][0];
  EXPECT_NE(row["B/A"].get<std::string>().find("x \xC2\xB1 "), std::string::npos);
  EXPECT_EQ(row["A repeats"], 2);
  EXPECT_TRUE(row["A samples/s"].is_number());
}

TEST(NoiseCliTest, SuiteTakesRepeat) {
  const std::string dir = fresh_folder("suite");
  std::ofstream(dir + "/s.toml") << "name = \"rep\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\n"
                                    "steps = 2\n[[run]]\nmodel = \"vgg16\"\nmode = \"infer\"\n"
                                    "input = 32\nbatch = 1\nrepeat = 2\n";
  auto r = dlbench("--db " + dir + "/r.db suite " + dir + "/s.toml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 repeats"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(warnings: "), std::string::npos) << "two steps are few\n" << r.err;
  EXPECT_EQ(stored_run(dir + "/r.db", 1)["result"]["repeats"]["count"], 2);
  std::ofstream(dir + "/bad.toml") << "name = \"bad\"\n[[run]]\nmodel = \"vgg16\"\nrepeat = 0\n";
  auto bad = dlbench("--db " + dir + "/r.db suite " + dir + "/bad.toml");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("bad.toml:4: repeat must be from 1 to 100, not 0"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace dlbench
