// The schema, one for every backend, as an ordered list of migrations. `schema_version` holds
// one row per applied migration; opening a database applies the missing ones in one
// transaction, so an older database is upgraded in place and a half-migrated one cannot exist.
//
//   version 1: machines, runs (configuration, environment, status), results,
//              telemetry_summary, telemetry_samples
//   version 2: suites, and the suite invocation each run belongs to (for suite --resume)
#pragma once

#include "bench/store/connection.h"

namespace dlbench::store {

constexpr int kSchemaVersion = 2;

// SQLite's PRAGMA application_id of every dlbench database, "dlbn" in ASCII: how dlbench tells
// its files from other programs' (sqlite_ownership.h).
constexpr long long kSqliteApplicationId = 0x646C626E;

// The version the database is at; 0 for a new one.
int schema_version(Connection& connection);

// Brings the database to `target` (tests build old databases with a smaller one) and, on
// SQLite, marks it with kSqliteApplicationId in the same transaction. Throws
// dlbench::Error (resource) when the database is newer than this dlbench.
void migrate(Connection& connection, int target = kSchemaVersion);

}  // namespace dlbench::store
