// Other programs' SQLite files are never taken over (issue 15, class 8): whatever is not
// dlbench's is refused naming the file, and left byte for byte as it was with no -wal or -shm
// beside it; new, empty and blank files and dlbench's own (marked or from before the mark) open.
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/store/schema.h"
#include "bench/store/sqlite_connection.h"
#include "bench/store/store.h"
#include "engine/core/error.h"
#include "tests/store/foreign_sqlite.h"
#include "tests/store/store_test_util.h"

namespace dlbench {
namespace {

using testing::sample_run;
using testing::snapshot;
using testing::sqlite_exec;
using testing::sqlite_value;
using testing::temp_folder;

const std::string kMark = std::to_string(store::kSqliteApplicationId);

// open_store refuses `path` with a resource error (exit code 3) that names it and says why, and
// the folder is exactly as it was.
void expect_refused_untouched(const std::string& path, const std::string& why) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  testing::FolderSnapshot before = snapshot(dir);
  try {
    store::open_store(path);
    ADD_FAILURE() << "opened " << path;
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kResource) << message;
    EXPECT_NE(message.find(path + " is not a dlbench database"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(snapshot(dir), before) << path << " or its folder was changed";
}

TEST(SqliteOwnershipTest, DatabaseHoldingOnlyAViewIsRefused) {
  std::string db = temp_folder("own-view") + "/view.db";
  sqlite_exec(db, "CREATE VIEW answers AS SELECT 42 AS answer");
  expect_refused_untouched(db, "view answers, which dlbench did not create");
}

TEST(SqliteOwnershipTest, DatabaseWithItsOwnSchemaVersionTableIsRefusedNotSwitchedToWal) {
  std::string db = temp_folder("own-schema-version") + "/migrations.db";
  sqlite_exec(db,
              "CREATE TABLE schema_version (version BIGINT NOT NULL, applied_unix_s BIGINT NOT "
              "NULL); INSERT INTO schema_version VALUES (7, 1)");
  expect_refused_untouched(db, "only part of dlbench's schema: table schema_version");
  EXPECT_EQ(sqlite_value(db, "PRAGMA journal_mode"), "delete");
}

TEST(SqliteOwnershipTest, EmptyDatabaseOfAnotherApplicationIdIsRefused) {
  std::string db = temp_folder("own-appid") + "/other.db";
  sqlite_exec(db, "PRAGMA application_id = 0x12345678");
  ASSERT_GT(std::filesystem::file_size(db), 0u);
  expect_refused_untouched(db, "application_id 0x12345678");
}

TEST(SqliteOwnershipTest, BlankDatabaseWithAUserVersionIsRefused) {
  std::string db = temp_folder("own-user-version") + "/versioned.db";
  sqlite_exec(db, "PRAGMA user_version = 3");
  ASSERT_GT(std::filesystem::file_size(db), 0u);
  expect_refused_untouched(db, "user_version 3");
}

TEST(SqliteOwnershipTest, RandomBytesAreRefused) {
  std::string dir = temp_folder("own-random");
  for (std::size_t size : {1u, 99u, 100u, 4096u, 65536u}) {
    std::string file = dir + "/random-" + std::to_string(size) + ".db";
    testing::write_bytes(file, testing::random_bytes(size, unsigned(size)));
    expect_refused_untouched(file, "not an SQLite file");
  }
}

TEST(SqliteOwnershipTest, TextFileIsRefused) {
  std::string file = temp_folder("own-text") + "/notes.txt";
  testing::write_bytes(file, std::string(4096, 'x') + "\nmy notes, not a database\n");
  expect_refused_untouched(file, "not an SQLite file");
}

TEST(SqliteOwnershipTest, DamagedFileWithAnSqliteHeaderIsRefused) {
  std::string file = temp_folder("own-damaged") + "/damaged.db";
  std::string bytes = testing::random_bytes(8192, 7);
  bytes.replace(0, 16, std::string("SQLite format 3", 16));
  bytes.replace(60, 12, std::string(12, '\0'));  // user_version and application_id 0
  testing::write_bytes(file, bytes);
  expect_refused_untouched(file, "a damaged SQLite file");
}

TEST(SqliteOwnershipTest, ForeignWalDatabaseIsRefusedWithoutLeavingWalFiles) {
  std::string db = temp_folder("own-wal") + "/photos.db";
  sqlite_exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE photos (id INTEGER PRIMARY KEY)");
  ASSERT_EQ(sqlite_value(db, "PRAGMA journal_mode"), "wal");
  expect_refused_untouched(db, "table photos, which dlbench did not create");
}

TEST(SqliteOwnershipTest, ForeignDatabaseInUseByItsProgramIsRefused) {
  std::string dir = temp_folder("own-in-use");
  std::string db = dir + "/photos.db";
  sqlite_exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE photos (id INTEGER PRIMARY KEY)");
  sqlite3* owner = nullptr;  // the other program, with an uncheckpointed write in its -wal
  ASSERT_EQ(sqlite3_open(db.c_str(), &owner), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(owner, "INSERT INTO photos VALUES (1)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::string main_file = snapshot(dir).at("photos.db"), wal = snapshot(dir).at("photos.db-wal");
  EXPECT_THROW(store::open_store(db), Error);
  testing::FolderSnapshot after = snapshot(dir);
  EXPECT_EQ(after.size(), 3u);  // the database, its -wal and -shm: nothing of dlbench's
  EXPECT_EQ(after.at("photos.db"), main_file);
  EXPECT_EQ(after.at("photos.db-wal"), wal);
  sqlite3_close(owner);
}

TEST(SqliteOwnershipTest, DlbenchSchemaWithAForeignTriggerIsRefused) {
  std::string db = temp_folder("own-trigger") + "/r.db";
  store::open_store(db)->save_run(sample_run());
  sqlite_exec(db,
              "PRAGMA application_id = 0; CREATE TRIGGER audit AFTER INSERT ON runs BEGIN "
              "SELECT 1; END");
  expect_refused_untouched(db, "trigger audit, which dlbench did not create");
}

TEST(SqliteOwnershipTest, NewEmptyAndBlankFilesBecomeMarkedDlbenchDatabases) {
  std::string dir = temp_folder("own-new");
  std::string empty = dir + "/empty.db", blank = dir + "/blank.db";
  testing::write_bytes(empty, "");
  sqlite_exec(blank, "CREATE TABLE scratch (x); DROP TABLE scratch");
  ASSERT_GT(std::filesystem::file_size(blank), 0u);
  for (const std::string& db : {dir + "/new.db", empty, blank}) {
    auto s = store::open_store(db);
    EXPECT_EQ(s->save_run(sample_run()), 1) << db;
    EXPECT_EQ(sqlite_value(db, "PRAGMA application_id"), kMark) << db;
  }
}

TEST(SqliteOwnershipTest, UnmarkedDatabaseOfAnOlderDlbenchIsMarkedAndStillReadable) {
  std::string dir = temp_folder("own-old");
  std::string current = dir + "/current.db", version_1 = dir + "/version1.db";
  store::open_store(current)->save_run(sample_run("vgg16"));
  store::migrate(*store::open_sqlite(version_1), 1);
  for (const std::string& db : {current, version_1}) {
    sqlite_exec(db, "PRAGMA application_id = 0");  // as a dlbench from before the mark left it
    ASSERT_EQ(sqlite_value(db, "PRAGMA application_id"), "0");
    auto s = store::open_store(db);
    EXPECT_EQ(s->list_runs({}).size(), db == current ? 1u : 0u) << db;
    EXPECT_EQ(sqlite_value(db, "PRAGMA application_id"), kMark) << db;
    EXPECT_EQ(store::schema_version(*store::open_sqlite(db)), store::kSchemaVersion) << db;
  }
}

}  // namespace
}  // namespace dlbench
