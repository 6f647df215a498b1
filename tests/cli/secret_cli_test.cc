// The password of a PostgreSQL --db is never printed (issue 15, class 5): the real binary, with a
// server that cannot be reached, in every form libpq accepts and in malformed ones; whatever the
// command, its output never holds the secret and its message still names the host and database.
// (tests/store/postgres_store_test.cc checks stored runs and reports against a live server.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::dlbench;
using testing::shell_quoted;

// Port 1 on the loopback refuses at once: no server, no wait.
struct SecretCase {
  const char* form;
  std::string db;
  int exit_code;                     // 3: unreachable; 2: malformed
  std::vector<std::string> names;    // what the message must still name
  std::vector<std::string> secrets;  // what no output may hold
};

std::vector<SecretCase> secret_cases() {
  const std::vector<std::string> host_db = {"127.0.0.1", "resultsdb"};
  return {
      {"URI user:password",
       "postgresql://me:S3cr3tPw@127.0.0.1:1/resultsdb",
       3,
       host_db,
       {"S3cr3tPw"}},
      {"?password=",
       "postgresql://me@127.0.0.1:1/resultsdb?password=S3cr3tPw&sslmode=disable",
       3,
       host_db,
       {"S3cr3tPw"}},
      {"key=value",
       "host=127.0.0.1 port=1 dbname=resultsdb user=me password=S3cr3tPw",
       3,
       host_db,
       {"S3cr3tPw"}},
      {"percent-encoded",
       "postgresql://me:S3cr%33t%40Pw@127.0.0.1:1/resultsdb",
       3,
       host_db,
       {"S3cr", "%33t", "3t@Pw"}},
      {"malformed URI",
       "postgresql://me:S3cr3tPw@[::1/resultsdb",
       2,
       {"[::1", "resultsdb"},
       {"S3cr3tPw"}},
      {"unencoded @ in the password",
       "postgresql://me:S3cr@3tPw@127.0.0.1:1/resultsdb",
       2,
       host_db,
       {"S3cr", "3tPw"}},
      {"malformed key=value",
       "host=127.0.0.1 dbname=resultsdb password=S3cr3t Pw",
       2,
       {},
       {"S3cr3t"}},
      {"mistyped scheme", "postgresql:/me:S3cr3tPw@127.0.0.1/resultsdb", 2, {}, {"S3cr3tPw"}},
  };
}

TEST(SecretCliTest, PasswordIsNeverPrintedWhateverTheFormOrTheCommand) {
  std::string dir = testing::temp_folder("secret");
  const std::vector<std::string> commands = {
      "runs list", "--json runs list",
      "run vgg16 --device cpu --input 32 --batch 2 --steps 1 --warmup 0 --mode infer",
      "report --last --out " + dir + "/report.html", "suite quick-cpu"};
  for (const SecretCase& c : secret_cases()) {
    for (const std::string& command : commands) {
      auto r = dlbench("--db " + shell_quoted(c.db) + " " + command);
      std::string output = r.out + r.err;
      SCOPED_TRACE(std::string(c.form) + ": dlbench " + command + "\n" + output);
      EXPECT_EQ(r.exit_code, c.exit_code);
      EXPECT_EQ(r.err.rfind("dlbench: ", 0), 0u);
      for (const std::string& secret : c.secrets)
        EXPECT_EQ(output.find(secret), std::string::npos) << "shows " << secret;
      for (const std::string& name : c.names)
        EXPECT_NE(r.err.find(name), std::string::npos) << "does not name " << name;
    }
  }
}

TEST(SecretCliTest, KeyValueStringIsPostgresNotAFileName) {
  std::string dir = testing::temp_folder("secret-conninfo");
  auto r = testing::run_command("cd " + dir + " && " + DLBENCH_BINARY +
                                " --db 'host=127.0.0.1 port=1 dbname=resultsdb' runs list");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("PostgreSQL"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "an SQLite file was created";
}

}  // namespace
}  // namespace dlbench
