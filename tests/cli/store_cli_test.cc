// The results database end to end: dlbench run stores (or not), runs list/show/export/delete
// see it, a killed run leaves nothing, a suite resumes, a report is self-contained, and a bad
// --db is refused without being touched.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "bench/store/sqlite_connection.h"
#include "tests/store/foreign_sqlite.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
using testing::temp_folder;

const char* kTinyRun = "run resnet50 --device cpu --input 32 --batch 2 --steps 2 --warmup 1";

using testing::read_file;

json runs_json(const std::string& db) {
  auto r = dlbench("--db " + db + " --json runs list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

TEST(StoreCliTest, NoStoreStoresNothing) {
  std::string db = temp_folder("nostore") + "/r.db";
  auto r = dlbench("--db " + db + " " + kTinyRun + " --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("stored as run"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(StoreCliTest, RunIsStoredAndRunsCommandsSeeIt) {
  std::string db = temp_folder("stored") + "/r.db";
  auto r = dlbench(std::string(kTinyRun) + " --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stored as run 1 in SQLite " + db), std::string::npos) << r.err;
  auto list = dlbench("--db " + db + " runs list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("resnet50"), std::string::npos) << list.out;
  auto show = dlbench("--db " + db + " runs show 1");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("throughput/samples_per_s"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("process.cpu"), std::string::npos) << show.out;  // telemetry
  auto csv = dlbench("--db " + db + " runs export --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("run_id,", 0), 0u);
  EXPECT_NE(csv.out.find("throughput/samples_per_s"), std::string::npos);
  auto exported = dlbench("--db " + db + " runs export --format json");
  json doc = json::parse(exported.out);
  ASSERT_EQ(doc["runs"].size(), 1u);
  EXPECT_EQ(doc["runs"][0]["config"]["batch"], 2);
  EXPECT_FALSE(doc["runs"][0]["telemetry"].empty());
  EXPECT_EQ(dlbench("--db " + db + " runs delete 1").exit_code, 0);
  EXPECT_EQ(dlbench("--db " + db + " runs delete 1").exit_code, 2);
  EXPECT_EQ(dlbench("--db " + db + " runs show 1").exit_code, 2);
  EXPECT_TRUE(runs_json(db)["runs"].empty());
}

TEST(StoreCliTest, RunKilledWhileMeasuringLeavesTheDatabaseConsistent) {
  std::string db = temp_folder("sigkill") + "/r.db";
  ASSERT_EQ(dlbench(std::string(kTinyRun) + " --db " + db).exit_code, 0);
  // Measures for 60 s; SIGKILL arrives after 3 s, in the middle of the measured steps.
  auto r = testing::run_command("(" + std::string(DLBENCH_BINARY) + " --db " + db +
                                " run resnet50 --device cpu --input 32 --batch 2 --warmup 1"
                                " --seconds 60 >/dev/null 2>&1 & p=$!; sleep 3; kill -9 $p;"
                                " wait $p; echo $?)");
  EXPECT_EQ(r.out, "137\n");
  EXPECT_EQ(runs_json(db)["runs"].size(), 1u);
  auto c = store::open_sqlite(db);
  EXPECT_EQ(store::to_text(c->query("PRAGMA integrity_check", {}).at(0)[0]), "ok");
}

TEST(StoreCliTest, SuiteStoresEachRunAndResumeSkipsTheLandedOnes) {
  std::string dir = temp_folder("suite");
  std::string db = dir + "/r.db", suite = dir + "/tiny.toml";
  std::ofstream(suite) << "name = \"tiny\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 1\n"
                          "steps = 1\n[[run]]\nmodel = \"resnet50\"\ninput = 32\nbatch = 2\n"
                          "mode = [\"train\", \"infer\"]\n";
  auto first = dlbench("--db " + db + " suite " + suite);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("2 ran"), std::string::npos) << first.err;
  // As if the suite had been killed during its second run.
  ASSERT_EQ(dlbench("--db " + db + " runs delete 2").exit_code, 0);
  auto resumed = dlbench("--db " + db + " suite " + suite + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("1 ran, 1 already landed"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.out, first.out);  // the same suite invocation id
  json runs = runs_json(db)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["suite"]["invocation"], runs[1]["suite"]["invocation"]);
  EXPECT_EQ(runs[0]["mode"], "infer");
}

// Each run of a suite has its own process peak RSS: a small inference run after a training run
// does not show the training run's peak (getrusage's lifetime maximum did).
TEST(StoreCliTest, EachRunOfASuiteHasItsOwnPeakRss) {
  std::string dir = temp_folder("suite-rss");
  std::string db = dir + "/r.db", suite = dir + "/rss.toml";
  std::ofstream(suite) << "name = \"rss\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\n"
                          "steps = 1\nmodel = \"resnet50\"\ninput = 32\n"
                          "[[run]]\nmode = \"train\"\nbatch = 32\n"
                          "[[run]]\nmode = \"infer\"\nbatch = 1\n";
  auto r = dlbench("--db " + db + " suite " + suite);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto exported = dlbench("--db " + db + " runs export --format json");
  json runs = json::parse(exported.out)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  auto peak = [](const json& run) {
    for (const json& m : run["metrics"])
      if (m["tag"] == "memory/process_peak_rss_gib") return m["value"].get<double>();
    return -1.0;
  };
  const double train = peak(runs[1]), infer = peak(runs[0]);  // newest first
  EXPECT_GT(train, 0);
  EXPECT_GT(infer, 0);
  EXPECT_LT(infer, 0.75 * train) << "the inference run reports the training run's peak";
  // One measured step has no CV: the report leaves the cell empty (null in JSON).
  auto report = dlbench("--db " + db + " report --last-suite --format json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json table = json::parse(report.out)["tables"][0];
  ASSERT_EQ(table["id"], "runs");
  EXPECT_TRUE(table["rows"][0]["CV %"].is_null()) << report.out;
  EXPECT_TRUE(table["rows"][0]["run"].is_number()) << report.out;
  auto one = dlbench("--db " + db + " report --runs 1 --format csv --out " + dir + "/one.csv");
  EXPECT_NE(one.err.find("report of 1 run: "), std::string::npos) << one.err;
}

TEST(StoreCliTest, ReportIsOneSelfContainedHtmlFile) {
  std::string dir = temp_folder("report");
  std::string db = dir + "/r.db", out = dir + "/report.html";
  ASSERT_EQ(dlbench(std::string(kTinyRun) + " --db " + db).exit_code, 0);
  auto r = dlbench("--db " + db + " report --last --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out + "\n");
  std::string html = read_file(out);
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);  // embedded, not linked
  EXPECT_NE(html.find("dlbench-charts"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?(https?:)?//)")))
      << "the report references something on the network";
  auto md = dlbench("--db " + db + " report --last --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| run | machine | model |"), std::string::npos) << md.out;
  auto js = dlbench("--db " + db + " report --last --format json");
  EXPECT_EQ(json::parse(js.out)["schema"], "dlbench.report/1");
}

TEST(StoreCliTest, CompareShowsRatios) {
  std::string db = temp_folder("compare") + "/r.db";
  ASSERT_EQ(dlbench(std::string(kTinyRun) + " --db " + db).exit_code, 0);
  ASSERT_EQ(dlbench(std::string(kTinyRun) + " --db " + db).exit_code, 0);
  auto r = dlbench("--db " + db + " compare 1 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("B/A"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x"), std::string::npos) << r.out;
}

TEST(StoreCliTest, BadDatabaseIsRefusedWithOneLineAndLeftAlone) {
  std::string dir = temp_folder("baddb");
  std::string notes = dir + "/notes.txt";
  std::ofstream(notes) << "my notes, not a database\n";
  for (const std::string& db : {notes, dir + "/missing/r.db", dir}) {
    auto r = dlbench("--db " + db + " runs list");
    EXPECT_EQ(r.exit_code, 3) << db << ": " << r.err;
    EXPECT_EQ(r.err.rfind("dlbench: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("hint: "), std::string::npos) << r.err;
  }
  // A run is refused before it measures, and the file is unchanged.
  EXPECT_EQ(dlbench("--db " + notes + " " + kTinyRun).exit_code, 3);
  EXPECT_EQ(read_file(notes), "my notes, not a database\n");
  EXPECT_EQ(dlbench("--db postgresql://x:y:z/?bogus=1 runs list").exit_code, 2);
}

TEST(StoreCliTest, OtherProgramsSqliteFilesAreRefusedByteForByte) {
  std::string dir = temp_folder("foreign");
  const std::vector<std::pair<std::string, std::string>> foreign = {
      {"view.db", "CREATE VIEW answers AS SELECT 42 AS answer"},
      {"migrations.db", "CREATE TABLE schema_version (version BIGINT NOT NULL)"},
      {"other-app.db", "PRAGMA application_id = 0x12345678"},
      {"wal.db", "PRAGMA journal_mode = WAL; CREATE TABLE photos (id INTEGER PRIMARY KEY)"}};
  for (const auto& [name, sql] : foreign) testing::sqlite_exec(dir + "/" + name, sql);
  testing::write_bytes(dir + "/random.db", testing::random_bytes(8192, 15));
  testing::FolderSnapshot before = testing::snapshot(dir);
  for (const auto& [name, content] : before) {
    auto r = dlbench("--db " + dir + "/" + name +
                     " run vgg16 --device cpu --input 32 --batch 2 --steps 1 --warmup 0"
                     " --mode infer");
    EXPECT_EQ(r.exit_code, 3) << name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("dlbench: " + dir + "/" + name + " is not a dlbench database", 0), 0u)
        << r.err;
    EXPECT_NE(r.err.find("\nhint: "), std::string::npos) << r.err;
    EXPECT_EQ(dlbench("--db " + dir + "/" + name + " runs list").exit_code, 3) << name;
  }
  EXPECT_EQ(testing::snapshot(dir), before) << "a refused file or its folder was changed";
}

}  // namespace
}  // namespace dlbench
