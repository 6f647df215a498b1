// The SQLite store: round trips, migrations, concurrent writers, killed writers, bad files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "bench/store/schema.h"
#include "bench/store/sqlite_connection.h"
#include "bench/store/store.h"
#include "engine/core/error.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::sample_run;
using testing::temp_folder;

using testing::read_file;

std::string integrity(const std::string& path) {
  auto c = store::open_sqlite(path);
  return store::to_text(c->query("PRAGMA integrity_check", {}).at(0)[0]);
}

TEST(SqliteStoreTest, RunRoundTripsWithMetricsTelemetryAndMachine) {
  std::string db = temp_folder("roundtrip") + "/r.db";
  auto s = store::open_store(db);
  std::int64_t id = s->save_run(sample_run());
  std::optional<store::RunRecord> r = s->get_run(id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model, "resnet50");
  EXPECT_EQ(r->precision, "fp16");
  EXPECT_EQ(r->batch, 128);
  EXPECT_DOUBLE_EQ(r->throughput, 812.5);
  EXPECT_EQ(r->result["step_time_ms"]["median"], 157.5);
  ASSERT_EQ(r->metrics.size(), 2u);
  EXPECT_DOUBLE_EQ(r->find_metric("step_time/p95_ms")->value, 160.25);
  EXPECT_EQ(r->find_metric("step_time/p95_ms")->unit, "ms");
  ASSERT_TRUE(r->find_telemetry("gpu0.sm_active"));
  EXPECT_DOUBLE_EQ(*r->find_telemetry("gpu0.sm_active")->mean, 71.5);
  EXPECT_FALSE(r->find_telemetry("gpu0.energy")->mean);
  EXPECT_EQ(r->find_telemetry("gpu0.energy")->reason, "not supported");
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].values, (std::vector<double>{60, 70, 90}));
  EXPECT_EQ(r->machine.hostname, "box");
  EXPECT_EQ(r->machine.environment["host"]["cores"], 8);
}

TEST(SqliteStoreTest, MachinesAreDeduplicatedAndRunsFilterAndDelete) {
  std::string db = temp_folder("filter") + "/r.db";
  auto s = store::open_store(db);
  std::int64_t a = s->save_run(sample_run("resnet50"));
  std::int64_t b = s->save_run(sample_run("vgg16"));
  EXPECT_EQ(s->machines().size(), 1u);
  store::RunFilter f;
  f.model = "vgg16";
  ASSERT_EQ(s->list_runs(f).size(), 1u);
  f = {};
  f.last = 1;
  EXPECT_EQ(s->list_runs(f).at(0).id, b);
  f = {};
  f.machine = "0011223344";
  EXPECT_EQ(s->list_runs(f).size(), 2u);
  EXPECT_TRUE(s->delete_run(a));
  EXPECT_FALSE(s->delete_run(a));
  EXPECT_FALSE(s->get_run(a));
  EXPECT_EQ(s->list_runs({}).size(), 1u);
}

TEST(SqliteStoreTest, NewDatabaseIsAtTheCurrentSchemaInWalMode) {
  std::string db = temp_folder("schema") + "/r.db";
  store::open_store(db);
  auto c = store::open_sqlite(db);
  EXPECT_EQ(store::schema_version(*c), store::kSchemaVersion);
  EXPECT_EQ(store::to_text(c->query("PRAGMA journal_mode", {}).at(0)[0]), "wal");
  for (const char* table :
       {"machines", "runs", "results", "telemetry_summary", "telemetry_samples", "suites"})
    EXPECT_EQ(c->query("SELECT name FROM sqlite_master WHERE name = ?", {table}).size(), 1u)
        << table;
}

TEST(SqliteStoreTest, VersionOneDatabaseIsMigratedAndKeepsItsRuns) {
  std::string db = temp_folder("migrate") + "/r.db";
  {
    auto c = store::open_sqlite(db);
    store::migrate(*c, 1);
    c->query(
        "INSERT INTO machines (fingerprint, hostname, description, environment_json,"
        " first_seen_unix_s) VALUES ('ab12', 'old', 'old box', '{}', 1)",
        {});
    c->query(
        "INSERT INTO runs (machine_id, created_unix_s, status, error, framework, model,"
        " mode, precision, device, batch, input_size, throughput, config_json, result_json)"
        " VALUES (1, 1, 'ok', '', 'native', 'vgg16', 'infer', 'fp32', 'cpu', 4, 224, 9.5,"
        " '{}', '{}')",
        {});
    EXPECT_EQ(store::schema_version(*c), 1);
  }
  auto s = store::open_store(db);
  std::vector<store::RunRecord> runs = s->list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].model, "vgg16");
  EXPECT_FALSE(runs[0].suite);
  store::RunRecord r = sample_run();
  r.suite = store::SuiteLink{"inv-1", "quick", 0, "key"};
  s->save_suite({"inv-1", "quick", "quick.toml", 5, 1, 0});
  s->save_run(r);
  EXPECT_EQ(s->suites("quick").at(0).landed_runs, 1);
  EXPECT_EQ(store::schema_version(*store::open_sqlite(db)), store::kSchemaVersion);
}

TEST(SqliteStoreTest, TwoProcessesWritingAtOnceBothLand) {
  std::string db = temp_folder("concurrent") + "/r.db";
  store::open_store(db);
  constexpr int kRunsEach = 15;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        auto s = store::open_store(db);
        for (int i = 0; i < kRunsEach; ++i) s->save_run(sample_run(p ? "vgg16" : "resnet50"));
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(store::open_store(db)->list_runs({}).size(), 2u * kRunsEach);
  EXPECT_EQ(integrity(db), "ok");
}

TEST(SqliteStoreTest, WriterKilledInsideItsTransactionLeavesNoRun) {
  std::string db = temp_folder("killed") + "/r.db";
  store::open_store(db)->save_run(sample_run());
  pid_t pid = fork();
  if (pid == 0) {
    auto c = store::open_sqlite(db);
    c->begin_write();
    c->query(
        "INSERT INTO runs (machine_id, created_unix_s, status, error, framework, model,"
        " mode, precision, device, batch, input_size, throughput, config_json, result_json)"
        " VALUES (1, 1, 'ok', '', 'native', 'half', 'infer', 'fp32', 'cpu', 4, 224, 1,"
        " '{}', '{}')",
        {});
    c->query(
        "INSERT INTO results (run_id, tag, value, unit, description) VALUES (2, 't', 1, "
        "'u', 'd')",
        {});
    raise(SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto s = store::open_store(db);
  std::vector<store::RunRecord> runs = s->list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].model, "resnet50");
  EXPECT_EQ(integrity(db), "ok");
}

void expect_resource_error(const std::string& db, const std::string& message) {
  try {
    store::open_store(db);
    ADD_FAILURE() << "opened " << db;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(SqliteStoreTest, BadPathsAreResourceErrorsAndFilesAreLeftAlone) {
  std::string dir = temp_folder("bad");
  expect_resource_error(dir + "/missing/r.db", "does not exist");
  expect_resource_error(dir, "is a folder");
  // Files that are not dlbench's: tests/store/sqlite_ownership_test.cc.
  std::string text = dir + "/notes.txt";
  std::string content(4096, 'x');
  std::ofstream(text) << content;
  expect_resource_error(text, "is not a dlbench database");
  EXPECT_EQ(read_file(text), content);
}

}  // namespace
}  // namespace dlbench
