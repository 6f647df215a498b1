#include "bench/store/sqlite_ownership.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "bench/store/schema.h"
#include "bench/store/sqlite_connection.h"
#include "engine/core/error.h"

namespace dlbench::store {
namespace {

namespace fs = std::filesystem;

const char* kHint = "pass --db PATH with a dlbench results database, or a new file name";

// The database header (sqlite.org/fileformat.html, section 1.3): 100 bytes, big-endian fields.
constexpr std::size_t kHeaderBytes = 100;
constexpr char kMagic[16] = "SQLite format 3";  // with its NUL: 16 bytes
constexpr std::size_t kApplicationIdOffset = 68;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::kResource,
              path + " is not a dlbench database (" + why + "); it was left as it was", kHint);
}

std::string hex(long long value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08llX", value & 0xFFFFFFFFLL);
  return text;
}

// file: URIs take a path with '%', '?' and '#' percent-encoded.
std::string file_uri(const std::string& path, bool immutable) {
  std::string out = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    } else {
      out.push_back(char(c));
    }
  }
  return out + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
}

std::string column_text(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

struct Contents {
  long long application_id = 0;
  long long user_version = 0;
  SchemaObjects objects;
};

// Without a -wal file the main file holds the whole database, and immutable=1 reads it without
// creating a -wal or -shm file. With one, a connection is (or was) using the database in WAL
// mode: read through it, with the usual locks, so what it holds is seen too.
Contents read_contents(const std::string& path) {
  std::error_code ec;
  bool has_wal = fs::exists(path + "-wal", ec);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file_uri(path, !has_wal).c_str(), &db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Contents contents;
  auto one_query = [&](const char* sql, auto on_row) {
    sqlite3_stmt* stmt = nullptr;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
      rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) on_row(stmt);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(stmt);
  };
  if (rc == SQLITE_OK) sqlite3_busy_timeout(db, kSqliteBusyTimeoutMs);
  one_query("PRAGMA application_id",
            [&](sqlite3_stmt* s) { contents.application_id = sqlite3_column_int64(s, 0); });
  one_query("PRAGMA user_version",
            [&](sqlite3_stmt* s) { contents.user_version = sqlite3_column_int64(s, 0); });
  one_query(kSchemaObjectsQuery, [&](sqlite3_stmt* s) {
    contents.objects.insert(column_text(s, 0) + " " + column_text(s, 1));
  });
  if (rc == SQLITE_OK) {
    sqlite3_close_v2(db);
    return contents;
  }
  std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  sqlite3_close_v2(db);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw Error(ErrorKind::kResource,
                  path + " stayed locked by another process (" + message + ")",
                  "wait for the other program to finish, then run again");
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      refuse(path, "a damaged SQLite file: " + message);
    default:
      throw Error(ErrorKind::kResource, "cannot read " + path + " (" + message + ")",
                  "check that the file is readable");
  }
}

std::string listed(const std::vector<std::string>& objects) {
  constexpr std::size_t kShown = 3;
  std::string out;
  for (std::size_t i = 0; i < objects.size() && i < kShown; ++i)
    out += (i ? ", " : "") + objects[i];
  return objects.size() > kShown ? out + ", ..." : out;
}

}  // namespace

Ownership check_sqlite_ownership(const std::string& path,
                                 const std::vector<SchemaObjects>& dlbench_schemas) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return Ownership::kNew;
  if (!fs::is_regular_file(status)) refuse(path, "not a regular file");
  if (fs::file_size(path, ec) == 0 && !ec) return Ownership::kNew;

  char header[kHeaderBytes] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kResource, "cannot read " + path, "check the file's permissions");
  in.read(header, kHeaderBytes);
  if (in.gcount() < std::streamsize(kHeaderBytes) ||
      std::memcmp(header, kMagic, sizeof kMagic) != 0)
    refuse(path, "not an SQLite file");
  const auto* id = reinterpret_cast<const unsigned char*>(header + kApplicationIdOffset);
  long long application_id =
      (static_cast<long long>(id[0]) << 24) | (id[1] << 16) | (id[2] << 8) | id[3];
  // The header decides alone for a marked file, so dlbench's own files are never opened twice.
  if (application_id == kSqliteApplicationId) return Ownership::kOurs;
  if (application_id != 0)
    refuse(path, "an SQLite database of another program, application_id " + hex(application_id));

  // Unmarked: what is in it, uncheckpointed WAL included, decides.
  Contents contents = read_contents(path);
  if (contents.application_id == kSqliteApplicationId) return Ownership::kOurs;
  if (contents.application_id != 0)
    refuse(path,
           "an SQLite database of another program, application_id " + hex(contents.application_id));
  if (contents.user_version != 0)
    refuse(path, "an SQLite database of another program, user_version " +
                     std::to_string(contents.user_version));
  if (contents.objects.empty()) return Ownership::kNew;
  for (const SchemaObjects& schema : dlbench_schemas)
    if (contents.objects == schema) return Ownership::kOursUnmarked;

  SchemaObjects all_of_dlbench;
  for (const SchemaObjects& schema : dlbench_schemas)
    all_of_dlbench.insert(schema.begin(), schema.end());
  std::vector<std::string> foreign, ours;
  for (const std::string& object : contents.objects)
    (all_of_dlbench.count(object) ? ours : foreign).push_back(object);
  if (!foreign.empty())
    refuse(path, "it holds " + listed(foreign) + ", which dlbench did not create");
  refuse(path, "it holds only part of dlbench's schema: " + listed(ours));
}

}  // namespace dlbench::store
