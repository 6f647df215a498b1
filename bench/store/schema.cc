#include "bench/store/schema.h"

#include <ctime>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace dlbench::store {
namespace {

// Only the id column differs between the dialects; every other type name means the same in
// both (SQLite maps them to its storage classes by affinity).
std::string id_column(Dialect d) {
  return d == Dialect::kSqlite ? "id INTEGER PRIMARY KEY AUTOINCREMENT"
                               : "id BIGSERIAL PRIMARY KEY";
}

std::vector<std::string> version_1(Dialect d) {
  return {
      "CREATE TABLE machines (" + id_column(d) +
          ", fingerprint TEXT NOT NULL UNIQUE, hostname TEXT NOT NULL,"
          " description TEXT NOT NULL, environment_json TEXT NOT NULL,"
          " first_seen_unix_s BIGINT NOT NULL)",
      "CREATE TABLE runs (" + id_column(d) +
          ", machine_id BIGINT NOT NULL REFERENCES machines(id),"
          " created_unix_s BIGINT NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL,"
          " framework TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL,"
          " precision TEXT NOT NULL, device TEXT NOT NULL, batch BIGINT NOT NULL,"
          " input_size BIGINT NOT NULL, throughput DOUBLE PRECISION NOT NULL,"
          " config_json TEXT NOT NULL, result_json TEXT NOT NULL)",
      "CREATE INDEX runs_machine ON runs(machine_id)",
      "CREATE TABLE results (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
      " tag TEXT NOT NULL, value DOUBLE PRECISION, unit TEXT NOT NULL,"
      " description TEXT NOT NULL, PRIMARY KEY (run_id, tag))",
      "CREATE TABLE telemetry_summary (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE "
      "CASCADE, metric TEXT NOT NULL, label TEXT NOT NULL, unit TEXT NOT NULL,"
      " kind TEXT NOT NULL, samples BIGINT NOT NULL, mean DOUBLE PRECISION,"
      " min DOUBLE PRECISION, max DOUBLE PRECISION, p95 DOUBLE PRECISION,"
      " total DOUBLE PRECISION, total_unit TEXT NOT NULL, reason TEXT NOT NULL,"
      " PRIMARY KEY (run_id, metric))",
      "CREATE TABLE telemetry_samples (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE "
      "CASCADE, metric TEXT NOT NULL, t_s DOUBLE PRECISION NOT NULL, value DOUBLE PRECISION)",
      "CREATE INDEX telemetry_samples_run ON telemetry_samples(run_id, metric)",
  };
}

std::vector<std::string> version_2(Dialect) {
  return {
      "CREATE TABLE suites (invocation TEXT PRIMARY KEY, name TEXT NOT NULL,"
      " file TEXT NOT NULL, started_unix_s BIGINT NOT NULL, planned_runs BIGINT NOT NULL)",
      "ALTER TABLE runs ADD COLUMN suite_invocation TEXT",
      "ALTER TABLE runs ADD COLUMN suite_name TEXT",
      "ALTER TABLE runs ADD COLUMN suite_index BIGINT",
      "ALTER TABLE runs ADD COLUMN suite_key TEXT",
      "CREATE INDEX runs_suite ON runs(suite_invocation)",
  };
}

using Migration = std::vector<std::string> (*)(Dialect);
const Migration kMigrations[] = {version_1, version_2};
static_assert(std::size(kMigrations) == kSchemaVersion);

// Any 64-bit key: it only has to be the same in every dlbench process.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7041976)";

}  // namespace

int schema_version(Connection& c) {
  auto rows = c.query("SELECT max(version) FROM schema_version", {});
  return rows.empty() ? 0 : int(to_int(rows[0][0], 0));
}

void migrate(Connection& c, int target) {
  WriteTransaction tx(c);
  // Two processes opening a new PostgreSQL database at once: the second waits here and then
  // sees the first one's tables.
  if (c.dialect() == Dialect::kPostgres) c.query(kMigrationLock, {});
  c.query(
      "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL,"
      " applied_unix_s BIGINT NOT NULL)",
      {});
  int current = schema_version(c);
  if (current > kSchemaVersion)
    throw Error(ErrorKind::kResource,
                c.location() + " has schema version " + std::to_string(current) +
                    ", newer than this dlbench knows (" + std::to_string(kSchemaVersion) + ")",
                "use a newer dlbench, or another --db");
  if (c.dialect() == Dialect::kSqlite &&
      to_int(c.query("PRAGMA application_id", {}).at(0)[0]) != kSqliteApplicationId)
    c.query("PRAGMA application_id = " + std::to_string(kSqliteApplicationId), {});
  for (int v = current + 1; v <= target; ++v) {
    for (const std::string& statement : kMigrations[v - 1](c.dialect())) c.query(statement, {});
    c.query("INSERT INTO schema_version (version, applied_unix_s) VALUES (?, ?)",
            {sql_int(v), sql_int(std::time(nullptr))});
  }
  tx.commit();
}

}  // namespace dlbench::store
