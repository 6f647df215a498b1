// runs export from SQLite, import into PostgreSQL and back: the same runs, metrics, telemetry
// and machines on both. DLBENCH_TEST_POSTGRES_URL names the server (.ci/run starts a throwaway
// one); without it these tests are skipped.
#include <gtest/gtest.h>

#include "bench/store/store.h"
#include "tests/store/import_test_util.h"
#include "tests/store/postgres_fixture.h"

namespace dlbench {
namespace {

// The server, emptied before each test.
class PostgresImportTest : public testing::FreshPostgres {};

TEST_F(PostgresImportTest, SqliteToPostgresAndBackRoundTrips) {
  const std::string dir = testing::temp_folder("pg-import");
  auto sqlite = store::open_store(dir + "/a.db");
  testing::save_two_machines(*sqlite);
  auto pg = store::open_store(url_);
  testing::expect_round_trip(*sqlite, *pg);
  EXPECT_EQ(pg->import_runs(testing::exported_runs(*sqlite), false).imported, 0);
  auto back = store::open_store(dir + "/back.db");
  testing::expect_round_trip(*pg, *back);
}

TEST_F(PostgresImportTest, AFailedImportLeavesThePostgresDatabaseAsItWas) {
  auto pg = store::open_store(url_);
  pg->save_run(testing::sample_run("vgg16"));
  std::vector<store::RunRecord> runs = {testing::sample_run("resnet50"),
                                        testing::sample_run("bert")};
  runs[0].created_unix_s += 10;
  runs[1].created_unix_s += 20;
  runs[1].metrics.push_back(runs[1].metrics.front());  // breaks the results' primary key
  EXPECT_ANY_THROW(pg->import_runs(runs, false));
  EXPECT_EQ(pg->list_runs({}).size(), 1u);
}

}  // namespace
}  // namespace dlbench
