// dlbench maxbatch end to end on the CPU: with --memory-limit the engine's host allocations
// fail beyond the limit as a GPU's do at its memory, so the search is real: it finds the batch
// that fits while the next one does not, goes on after out-of-memory attempts, says when not
// even batch 1 fits, stores its result for runs and report, and refuses bad flags in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/json_text.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

// ResNet-50 at 32 px on the CPU: about 270 MiB of weights, gradients and momentum, and 25 MiB
// per sample, so this limit leaves room for a batch of 3. One measured step per attempt
// keeps the search short.
const std::string kSearch = "maxbatch resnet50 --device cpu --input 32 --warmup 0 --steps 1 ";
const std::string kLimit = "350M";

json search(const std::string& extra, const std::string& db = "",
            const std::string& limit = kLimit) {
  auto r = dlbench((db.empty() ? std::string() : "--db " + db + " ") + kSearch + "--memory-limit " +
                   limit + " " + extra + (db.empty() ? " --no-store" : "") + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

const json* attempt_at(const json& doc, std::int64_t batch) {
  for (const json& a : doc["attempts"])
    if (a["batch"] == batch) return &a;
  return nullptr;
}

TEST(MaxBatchCliTest, FindsTheBatchThatFitsWhileTheNextDoesNot) {
  const json doc = search("");
  ASSERT_TRUE(doc["max_batch"].is_number()) << dump_json(doc, 2);
  const std::int64_t b = doc["max_batch"];
  EXPECT_GT(b, 1);
  EXPECT_FALSE(doc["capped"].get<bool>());
  EXPECT_EQ(doc["smallest_failure"], b + 1);  // small batches are searched exactly
  const json* fits = attempt_at(doc, b);
  const json* next = attempt_at(doc, b + 1);
  ASSERT_TRUE(fits && next) << dump_json(doc["attempts"]);
  EXPECT_TRUE((*fits)["fits"].get<bool>());
  EXPECT_FALSE((*next)["fits"].get<bool>());
  EXPECT_NE((*next)["error"].get<std::string>().find("out of memory"), std::string::npos);
  // The planner's bytes: batch b within the limit, b + 1 beyond it; the prediction was the answer.
  const double limit = doc["config"]["memory_limit_bytes"];
  const double fixed = doc["prediction"]["fixed_bytes"],
               per_sample = doc["prediction"]["per_sample_bytes"];
  EXPECT_GT(per_sample, 0);
  EXPECT_LE(fixed + per_sample * b, limit);
  EXPECT_GT(fixed + per_sample * (b + 1), limit);
  EXPECT_EQ(doc["prediction"]["batch"], b);
  // What the largest batch measured: its peak (the engine's own accounting) within the limit.
  EXPECT_GT(doc["throughput_samples_per_s"].get<double>(), 0);
  EXPECT_LE(doc["peak_bytes"]["measured"].get<double>(), limit);
  EXPECT_GT(doc["search_seconds"].get<double>(), 0);
}

TEST(MaxBatchCliTest, AttemptsAfterAnOutOfMemoryOneRunAndFit) {
  const json doc = search("--first-batch 64");
  const json& attempts = doc["attempts"];
  ASSERT_GE(attempts.size(), 3u) << dump_json(attempts);
  EXPECT_EQ(attempts[0]["batch"], 64);
  EXPECT_FALSE(attempts[0]["fits"].get<bool>());
  const auto later_fit = std::find_if(attempts.begin() + 1, attempts.end(),
                                      [](const json& a) { return a["fits"].get<bool>(); });
  ASSERT_NE(later_fit, attempts.end()) << dump_json(attempts);
  EXPECT_GT((*later_fit)["throughput_samples_per_s"].get<double>(), 0);
  // The same answer as starting from the prediction.
  EXPECT_EQ(doc["max_batch"], search("")["max_batch"]);
}

// --within stops once the gap is that share of the batch: both ends were run, the batch that
// fit fits, the failure failed, and nothing past the gap was tried twice.
TEST(MaxBatchCliTest, WithinStopsAtTheGivenResolution) {
  const json doc = search("--first-batch 40 --within 25", "", "900M");
  ASSERT_TRUE(doc["max_batch"].is_number()) << dump_json(doc, 2);
  const auto b = doc["max_batch"].get<std::int64_t>();
  ASSERT_TRUE(doc["smallest_failure"].is_number()) << dump_json(doc, 2);
  const auto fail = doc["smallest_failure"].get<std::int64_t>();
  EXPECT_EQ(doc["within_percent"], 25.0);
  EXPECT_GT(fail, b);
  EXPECT_LE(fail - b, std::max<std::int64_t>(1, b / 4)) << dump_json(doc["attempts"], 2);
  ASSERT_NE(attempt_at(doc, b), nullptr);
  EXPECT_TRUE((*attempt_at(doc, b))["fits"].get<bool>());
  ASSERT_NE(attempt_at(doc, fail), nullptr);
  EXPECT_FALSE((*attempt_at(doc, fail))["fits"].get<bool>());
  // The same search to the exact batch tries more and ends between the two.
  const json exact = search("--first-batch 40 --within 0", "", "900M");
  const auto e = exact["max_batch"].get<std::int64_t>();
  EXPECT_GE(e, b);
  EXPECT_LT(e, fail);
  EXPECT_EQ(exact["smallest_failure"], e + 1);
}

TEST(MaxBatchCliTest, SaysWhenNotEvenBatchOneFits) {
  auto r = dlbench(
      "maxbatch resnet50 --device cpu --input 32 --memory-limit 8M --steps 1 --warmup 0 "
      "--no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("does not fit even at batch 1"), std::string::npos) << r.out;
  const json doc = search("", "", "8M");
  EXPECT_TRUE(doc["max_batch"].is_null());
  ASSERT_EQ(doc["attempts"].size(), 1u);
  EXPECT_EQ(doc["attempts"][0]["batch"], 1);
  EXPECT_FALSE(doc["attempts"][0]["fits"].get<bool>());
}

TEST(MaxBatchCliTest, SaysTheSizeTheModelIsBuiltAt) {
  auto r =
      dlbench("maxbatch resnet50 --device cpu --memory-limit 8M --steps 1 --warmup 0 --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", input 224\n"), std::string::npos) << r.out;  // the model's default
  r = dlbench(kSearch + "--memory-limit 8M --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", input 32\n"), std::string::npos) << r.out;
}

TEST(MaxBatchCliTest, TheCapEndsASearchThatStillFits) {
  const json doc = search("--max-batch 3");
  EXPECT_EQ(doc["max_batch"], 3);
  EXPECT_TRUE(doc["capped"].get<bool>());
  for (const json& a : doc["attempts"]) EXPECT_LE(a["batch"].get<std::int64_t>(), 3);
}

// A translation model's inference decodes, so its planner probes size the decoder, not the
// teacher-forced graph: a beam of 4 holds more per sentence than greedy decoding (its step graph
// runs 4 rows a sentence), and the result says which search it sized. (The full GNMT at its
// shortest length, one attempt at batch 1.)
TEST(MaxBatchCliTest, ATranslationModelsInferenceIsSizedAsItDecodes) {
  const auto sized = [](int beam) {
    auto r = dlbench(
        "maxbatch gnmt --device cpu --mode infer --input 16 --warmup 0 --steps 1 --max-batch 1 "
        "--no-store --json --beam " +
        std::to_string(beam));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json greedy = sized(1), beam = sized(4);
  EXPECT_FALSE(greedy["config"].contains("beam"));
  EXPECT_EQ(beam["config"]["beam"], 4);
  const double greedy_bytes = greedy["prediction"]["per_sample_bytes"];
  const double beam_bytes = beam["prediction"]["per_sample_bytes"];
  EXPECT_GT(greedy_bytes, 0);
  // Measured: 592,128 and 1,583,360 bytes per sentence (the encoder's part is not repeated).
  EXPECT_GT(beam_bytes, 2 * greedy_bytes);
  EXPECT_EQ(beam["max_batch"], 1);
}

TEST(MaxBatchCliTest, BadFlagsAreOneLineUsageErrors) {
  for (const char* args :
       {"--memory-limit 12X", "--memory-limit 0", "--memory-limit -5M", "--max-batch -1",
        "--max-batch 0", "--first-batch -2", "--mode fly", "--precision fp8", "--steps 0",
        "--input 0", "--within -1", "--within 60", "--within lots"}) {
    auto r = dlbench(std::string("maxbatch resnet50 --device cpu --no-store ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("dlbench: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  auto unknown = dlbench("maxbatch nosuchnet --device cpu --no-store");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
}

TEST(MaxBatchCliTest, TheResultIsStoredListedAndReported) {
  const std::string dir = testing::temp_folder("maxbatch-cli");
  const std::string db = dir + "/r.db";
  const std::int64_t b = search("", db)["max_batch"];
  auto list = dlbench("--db " + db + " runs list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("maxbatch train"), std::string::npos) << list.out;
  auto report = dlbench("--db " + db + " report --last 1 --format json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json doc = json::parse(report.out);
  bool found = false;
  for (const json& t : doc["tables"])
    if (t["id"] == "max_batch") {
      found = true;
      ASSERT_EQ(t["rows"].size(), 1u) << dump_json(t);
      EXPECT_EQ(t["rows"][0]["largest batch"], std::to_string(b)) << dump_json(t);
      EXPECT_EQ(t["rows"][0]["smallest failure"], b + 1) << dump_json(t);
      EXPECT_EQ(t["rows"][0]["mode"], "train");
    }
  EXPECT_TRUE(found) << report.out.substr(0, 2000);
}

}  // namespace
}  // namespace dlbench
