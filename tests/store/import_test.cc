// runs export --format json, then import into another database: every field comes back, a
// second import stores nothing, a corrupt file stores nothing, and a shipped reference reads.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/store/export.h"
#include "bench/store/import.h"
#include "bench/store/store.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "tests/store/import_test_util.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using testing::sample_run;
using testing::temp_folder;

TEST(ImportTest, ExportThenImportIntoAFreshDatabaseKeepsEveryRun) {
  const std::string dir = temp_folder("import-roundtrip");
  auto a = store::open_store(dir + "/a.db");
  testing::save_two_machines(*a);
  auto b = store::open_store(dir + "/b.db");
  testing::expect_round_trip(*a, *b);
}

TEST(ImportTest, ImportingTwiceImportsNothingTheSecondTime) {
  const std::string dir = temp_folder("import-twice");
  auto a = store::open_store(dir + "/a.db");
  testing::save_two_machines(*a);
  const std::vector<store::RunRecord> runs = testing::exported_runs(*a);
  auto b = store::open_store(dir + "/b.db");
  store::ImportCounts dry = b->import_runs(runs, /*dry_run=*/true);
  EXPECT_EQ(dry.imported, 3);
  EXPECT_TRUE(b->list_runs({}).empty()) << "a dry run stored something";
  store::ImportCounts first = b->import_runs(runs, false);
  EXPECT_EQ(first.imported, 3);
  EXPECT_EQ(first.skipped, 0);
  store::ImportCounts second = b->import_runs(runs, false);
  EXPECT_EQ(second.imported, 0);
  EXPECT_EQ(second.skipped, 3);
  EXPECT_EQ(b->list_runs({}).size(), 3u);
  // Importing into the database the runs came from stores nothing either.
  EXPECT_EQ(a->import_runs(runs, false).imported, 0);
}

TEST(ImportTest, CorruptTruncatedOrForeignFilesAreRefused) {
  const std::string dir = temp_folder("import-corrupt");
  auto a = store::open_store(dir + "/a.db");
  testing::save_two_machines(*a);
  std::ostringstream text;
  store::export_json(testing::exported_runs(*a), text);
  const std::string good = text.str();
  for (const std::string& bad :
       {good.substr(0, good.size() / 2), std::string("not json"), std::string("[]"),
        std::string(R"({"schema": "dlbench.run/1", "runs": []})"),
        std::string(R"({"schema": "dlbench.runs/1", "runs": [{"id": 1}]})")}) {
    try {
      store::parse_runs_json(bad, "f.json");
      ADD_FAILURE() << "accepted: " << bad.substr(0, 80);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("f.json"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(store::parse_runs_json(good, "f.json").size(), 3u);

  // A file that lists a result or a telemetry metric twice for one run (edited by hand) is
  // refused by name before the database would refuse it half-way through.
  for (const char* list : {"metrics", "telemetry"}) {
    nlohmann::json doc = nlohmann::json::parse(good);
    nlohmann::json& entries = doc["runs"][1][list];
    ASSERT_FALSE(entries.empty()) << list;
    entries.push_back(entries[0]);
    try {
      store::parse_runs_json(dump_json(doc), "f.json");
      ADD_FAILURE() << "accepted a repeated entry of " << list;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find("f.json: run 2 lists"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
    }
  }
}

// A failure half-way through leaves nothing: the import is one transaction.
TEST(ImportTest, AnImportThatFailsHalfWayStoresNothing) {
  const std::string dir = temp_folder("import-atomic");
  auto b = store::open_store(dir + "/b.db");
  b->save_run(sample_run("vgg16"));
  std::vector<store::RunRecord> runs = {sample_run("resnet50"), sample_run("bert")};
  runs[0].created_unix_s += 10;
  runs[1].created_unix_s += 20;
  // Two metrics with one tag break the results table's primary key: the second run fails.
  runs[1].metrics.push_back(runs[1].metrics.front());
  const std::size_t before = b->list_runs({}).size();
  EXPECT_ANY_THROW(b->import_runs(runs, false));
  EXPECT_EQ(b->list_runs({}).size(), before) << "the first run of a failed import stayed";
  EXPECT_EQ(b->machines().size(), 1u);
}

TEST(ImportTest, TheShippedH100ReferenceReads) {
  const std::vector<store::RunRecord> runs =
      store::read_runs_file(std::string(DLBENCH_SOURCE_DIR) + "/references/h100-sxm-80gb.json");
  ASSERT_EQ(runs.size(), 16u);
  for (const store::RunRecord& r : runs) {
    EXPECT_EQ(r.status, "ok");
    EXPECT_GT(r.throughput, 0);
    EXPECT_NE(r.machine.description.find("H100"), std::string::npos);
  }
}

TEST(ImportTest, SameRunIsTheMachineTheSecondAndTheWorkload) {
  store::RunRecord a = sample_run(), b = sample_run();
  b.id = 99;
  b.throughput = 1;
  EXPECT_TRUE(store::same_run(a, b));
  b.created_unix_s += 1;
  EXPECT_FALSE(store::same_run(a, b));
  b = a;
  b.machine.fingerprint = "ff";
  EXPECT_FALSE(store::same_run(a, b));
  b = a;
  b.precision = "bf16";
  EXPECT_FALSE(store::same_run(a, b));
}

}  // namespace
}  // namespace dlbench
