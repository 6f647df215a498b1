// Whether an SQLite file is dlbench's to write, decided from a read-only look at it before
// anything is written to it (not even the switch to WAL): another program's database, or a
// file that is not an SQLite database at all, is refused and left byte for byte as it was,
// with no -wal or -shm file beside it.
//
// dlbench marks its databases with PRAGMA application_id = 'dlbn' (kSqliteApplicationId in
// schema.h; migrate() sets it in the transaction that creates the schema). A file is dlbench's
// when it
//   - does not exist, or is empty (zero bytes): a new database;
//   - is an SQLite database with no schema objects, application_id 0 and user_version 0;
//   - carries dlbench's application_id;
//   - carries application_id 0 and exactly the objects of dlbench's schema at some version
//     (a database of a dlbench from before the mark; migrate() then marks it).
// Anything else is another program's: another application_id or user_version, tables, views,
// indexes or triggers dlbench did not create, or bytes that are not an SQLite database.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace dlbench::store {

// A schema's objects as "table runs", "index runs_machine", ..., without SQLite's own
// (sqlite_sequence, sqlite_autoindex_*): the rows of kSchemaObjectsQuery, type and name.
using SchemaObjects = std::set<std::string>;
constexpr const char* kSchemaObjectsQuery =
    "SELECT type, name FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_'";

enum class Ownership {
  kNew,           // missing, empty, or an SQLite database with nothing in it
  kOurs,          // marked as dlbench's
  kOursUnmarked,  // dlbench's schema from before the mark
};

// `dlbench_schemas`: the objects of dlbench's schema at each version. Throws dlbench::Error
// (resource), naming the file and saying it is not a dlbench database, for every other file.
Ownership check_sqlite_ownership(const std::string& path,
                                 const std::vector<SchemaObjects>& dlbench_schemas);

}  // namespace dlbench::store
