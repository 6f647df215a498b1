// The PostgreSQL store against a real server: DLBENCH_TEST_POSTGRES_URL names it (.ci/run
// starts a throwaway one); without it these tests are skipped.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench/store/postgres_connection.h"
#include "bench/store/postgres_location.h"
#include "bench/store/schema.h"
#include "bench/store/store.h"
#include "engine/core/error.h"
#include "tests/store/postgres_fixture.h"
#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::sample_run;

// The server, emptied before each test.
class PostgresStoreTest : public testing::FreshPostgres {};

TEST_F(PostgresStoreTest, RunRoundTripsLikeSqlite) {
  auto s = store::open_store(url_);
  std::int64_t id = s->save_run(sample_run());
  auto r = s->get_run(id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model, "resnet50");
  EXPECT_DOUBLE_EQ(r->throughput, 812.5);
  EXPECT_DOUBLE_EQ(r->find_metric("step_time/p95_ms")->value, 160.25);
  EXPECT_DOUBLE_EQ(*r->find_telemetry("gpu0.sm_active")->mean, 71.5);
  EXPECT_EQ(r->find_telemetry("gpu0.energy")->reason, "not supported");
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].values.size(), 3u);
  EXPECT_EQ(r->machine.environment["host"]["cores"], 8);
  EXPECT_TRUE(s->delete_run(id));
  EXPECT_TRUE(s->list_runs({}).empty());
}

// The server takes only UTF-8: bytes that are not (a Latin-1 suite file's name) are stored as
// U+FFFD instead of failing the save.
TEST_F(PostgresStoreTest, TextThatIsNotUtf8IsStoredWithReplacementCharacters) {
  auto s = store::open_store(url_);
  store::RunRecord run = sample_run("caf\xE9");
  run.suite = store::SuiteLink{"caf\xE9-1", "caf\xE9", 0, "k"};
  s->save_suite({"caf\xE9-1", "caf\xE9", "caf\xE9.toml", 1, 1, 0});
  auto r = s->get_run(s->save_run(run));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model, "caf\xEF\xBF\xBD");
  EXPECT_EQ(r->suite->name, "caf\xEF\xBF\xBD");
  EXPECT_EQ(s->suites().at(0).name, "caf\xEF\xBF\xBD");
}

// A user's PGCLIENTENCODING (or a server default) other than UTF-8 must not make the server
// convert dlbench's UTF-8 text: a name saved under LATIN1 reads back byte for byte elsewhere.
TEST_F(PostgresStoreTest, TextIsUtf8WhateverTheClientEncodingSays) {
  const std::string name = "caf\xC3\xA9 \xE2\x86\x92 \xE6\x97\xA5";
  const char* earlier = std::getenv("PGCLIENTENCODING");
  const std::string kept = earlier ? earlier : "";
  setenv("PGCLIENTENCODING", "LATIN1", 1);
  int64_t id = store::open_store(url_)->save_run(sample_run(name));
  earlier ? setenv("PGCLIENTENCODING", kept.c_str(), 1) : unsetenv("PGCLIENTENCODING");
  auto r = store::open_store(url_)->get_run(id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model, name);
}

TEST_F(PostgresStoreTest, VersionOneSchemaIsMigrated) {
  {
    auto c = store::open_postgres(url_);
    store::migrate(*c, 1);
    EXPECT_EQ(store::schema_version(*c), 1);
  }
  auto s = store::open_store(url_);
  EXPECT_EQ(store::schema_version(*store::open_postgres(url_)), store::kSchemaVersion);
  s->save_suite({"inv", "quick", "quick.toml", 1, 1, 0});
  EXPECT_EQ(s->suites("quick").size(), 1u);
}

TEST_F(PostgresStoreTest, TwoProcessesWritingAtOnceBothLand) {
  constexpr int kRunsEach = 10;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        auto s = store::open_store(url_);  // both migrate a new database at once
        for (int i = 0; i < kRunsEach; ++i) s->save_run(sample_run());
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
  auto s = store::open_store(url_);
  EXPECT_EQ(s->list_runs({}).size(), 2u * kRunsEach);
  EXPECT_EQ(s->machines().size(), 1u);
}

// The test server's database named in each form libpq accepts, each with a password (the trust
// login ignores it) that begins with kSecret.
constexpr const char* kSecret = "S3cr3t";

std::vector<std::string> with_passwords(const std::string& url) {
  std::vector<std::string> out;
  std::size_t at = url.find('@');
  if (at != std::string::npos) out.push_back(url.substr(0, at) + ":S3cr3tUri" + url.substr(at));
  out.push_back(url + (url.find('?') == std::string::npos ? "?" : "&") + "password=S3cr3tQuery");
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  PQfreemem(error);
  std::string conninfo;
  for (PQconninfoOption* o = options; o && o->keyword; ++o)
    if (o->val) conninfo += std::string(o->keyword) + "='" + o->val + "' ";
  PQconninfoFree(options);
  out.push_back(conninfo + "password=S3cr3tKeyValue");
  return out;
}

TEST_F(PostgresStoreTest, PasswordIsNeverPrintedStoredOrReported) {
  std::string dir = testing::temp_folder("pg-secret");
  for (const std::string& location : with_passwords(url_)) {
    std::string db = "--db " + testing::shell_quoted(location) + " ";
    std::string seen;  // every output and file of every command
    auto run = testing::dlbench(db +
                                "run vgg16 --device cpu --input 32 --batch 2 --steps 1 "
                                "--warmup 0 --mode infer");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("in PostgreSQL "), std::string::npos) << run.err;
    seen += run.out + run.err;
    for (const char* command : {"runs list", "runs show 1", "runs export --format json",
                                "report --last --format json", "report --last --out "}) {
      std::string html = dir + "/report.html";
      bool to_file = std::string(command).find("--out") != std::string::npos;
      auto r = testing::dlbench(db + command + (to_file ? html : ""));
      EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
      seen += r.out + r.err;
      if (!to_file) continue;
      std::ifstream in(html);
      std::ostringstream page;
      page << in.rdbuf();
      EXPECT_NE(page.str().find("PostgreSQL "), std::string::npos);  // the header names it
      seen += page.str();
    }
    EXPECT_EQ(seen.find(kSecret), std::string::npos)
        << "the password of " << store::display_postgres_location(location) << " was shown";
    SetUp();  // an empty database for the next form
  }
}

TEST(PostgresUrlTest, MalformedUrlIsAUsageError) {
  try {
    store::open_store("postgresql://host:notaport:/x?bogus=1");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
  }
}

TEST(PostgresUrlTest, UnreachableServerIsAResourceError) {
  try {
    store::open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource) << e.what();
  }
}

}  // namespace
}  // namespace dlbench
