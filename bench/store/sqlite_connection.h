// The SQLite connection: WAL journal (readers never block the writer), a long busy timeout
// (two dlbench processes writing at once queue rather than fail), and a read-only check that
// the file is dlbench's before anything is written to it (sqlite_ownership.h), so a wrong --db
// is never damaged.
#pragma once

#include <memory>
#include <string>

#include "bench/store/connection.h"

namespace dlbench::store {

// How long a writer waits for another process's transaction before giving up.
constexpr int kSqliteBusyTimeoutMs = 60'000;

// Throws dlbench::Error (resource) when the folder is missing, the file cannot be opened, is
// not an SQLite database, or is an SQLite database of another program; those are left as
// they were.
std::unique_ptr<Connection> open_sqlite(const std::string& path);

}  // namespace dlbench::store
