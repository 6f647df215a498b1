#include "bench/store/sqlite_connection.h"

#include <sqlite3.h>

#include <filesystem>
#include <map>

#include "bench/store/schema.h"
#include "bench/store/sqlite_ownership.h"
#include "engine/core/error.h"

namespace dlbench::store {
namespace {

namespace fs = std::filesystem;

const char* kHint = "pass --db PATH with a dlbench results database, or a new file name";

class SqliteConnection : public Connection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConnection() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  Dialect dialect() const override { return Dialect::kSqlite; }
  std::string location() const override { return "SQLite " + path_; }

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    sqlite3_stmt* stmt = prepare(sql);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (std::size_t i = 0; i < params.size(); ++i) {
      int rc = params[i] ? sqlite3_bind_text(stmt, int(i) + 1, params[i]->c_str(),
                                             int(params[i]->size()), SQLITE_TRANSIENT)
                         : sqlite3_bind_null(stmt, int(i) + 1);
      if (rc != SQLITE_OK) fail(rc, sql);
    }
    std::vector<SqlRow> rows;
    for (;;) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        sqlite3_reset(stmt);
        fail(rc, sql);
      }
      SqlRow row(sqlite3_column_count(stmt));
      for (int c = 0; c < int(row.size()); ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) continue;
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row[c] = std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt, c));
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(stmt);
    return rows;
  }

  void begin_write() override { query("BEGIN IMMEDIATE", {}); }
  void commit() override { query("COMMIT", {}); }
  void rollback() noexcept override {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  sqlite3_stmt* prepare(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), int(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) fail(rc, sql);
    statements_.emplace(sql, stmt);
    return stmt;
  }

  [[noreturn]] void fail(int rc, const std::string& sql) {
    std::string message = sqlite3_errmsg(db_);
    switch (rc & 0xff) {
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT:
        throw Error(ErrorKind::kResource,
                    path_ + " is not a usable SQLite database (" + message + ")", kHint);
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        throw Error(ErrorKind::kResource,
                    path_ + " stayed locked by another process (" + message + ")",
                    "wait for the other dlbench to finish, then run again");
      case SQLITE_READONLY:
      case SQLITE_CANTOPEN:
      case SQLITE_PERM:
      case SQLITE_IOERR:
      case SQLITE_FULL:
      case SQLITE_AUTH:
        throw Error(ErrorKind::kResource, "cannot write " + path_ + " (" + message + ")",
                    "check the file's permissions and the free disk space");
      default:
        throw Error(ErrorKind::kInternal, "SQLite: " + message + " in: " + sql.substr(0, 80),
                    "this is a dlbench bug; please report it");
    }
  }

  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> statements_;  // prepared once, reused (bulk inserts)
};

// The objects of dlbench's schema at each version, from migrating empty in-memory databases:
// what an unmarked database must hold to be taken for dlbench's.
const std::vector<SchemaObjects>& dlbench_schemas() {
  static const std::vector<SchemaObjects> schemas = [] {
    std::vector<SchemaObjects> out;
    for (int version = 1; version <= kSchemaVersion; ++version) {
      sqlite3* db = nullptr;
      int rc = sqlite3_open(":memory:", &db);
      DLBENCH_CHECK(rc == SQLITE_OK, sqlite3_errstr(rc));
      SqliteConnection connection(db, ":memory:");
      migrate(connection, version);
      SchemaObjects objects;
      for (const SqlRow& row : connection.query(kSchemaObjectsQuery, {}))
        objects.insert(to_text(row[0]) + " " + to_text(row[1]));
      out.push_back(std::move(objects));
    }
    return out;
  }();
  return schemas;
}

}  // namespace

std::unique_ptr<Connection> open_sqlite(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec))
    throw Error(ErrorKind::kResource, "--db " + path + " is a folder, not a database file",
                "name a file, e.g. --db " + (p / "results.db").string());
  fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw Error(
        ErrorKind::kResource,
        "cannot create database " + path + ": folder " + parent.string() + " does not exist",
        "create the folder or choose another --db path");
  // Read-only, before anything is written (WAL included): another program's file is refused
  // as it was.
  check_sqlite_ownership(path, dlbench_schemas());
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw Error(ErrorKind::kResource, "cannot open database " + path + " (" + message + ")",
                "check that the file is readable and writable");
  }
  sqlite3_busy_timeout(db, kSqliteBusyTimeoutMs);
  auto connection = std::make_unique<SqliteConnection>(db, path);
  connection->query("PRAGMA journal_mode = WAL", {});
  connection->query("PRAGMA foreign_keys = ON", {});
  return connection;
}

}  // namespace dlbench::store
