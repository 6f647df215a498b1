// A PostgreSQL --db is shown without its password (issue 15, class 5), in every form libpq
// accepts and in those it does not, and a key=value string is taken for PostgreSQL, not for an
// SQLite file name. No server needed.
#include <gtest/gtest.h>

#include "bench/store/postgres_location.h"

namespace dlbench {
namespace {

using store::display_postgres_location;
using store::parse_postgres_location;

// Each secret-holding string must be shown without any of `secrets`, and still name `names`.
void expect_redacted(const std::string& location, const std::vector<std::string>& secrets,
                     const std::vector<std::string>& names) {
  std::string display = display_postgres_location(location);
  store::PostgresLocation parsed = parse_postgres_location(location);
  for (const std::string& secret : secrets) {
    EXPECT_EQ(display.find(secret), std::string::npos) << location << " -> " << display;
    EXPECT_EQ(parsed.problem.find(secret), std::string::npos) << location << ": " << parsed.problem;
  }
  for (const std::string& name : names)
    EXPECT_NE(display.find(name), std::string::npos) << location << " -> " << display;
}

TEST(PostgresLocationTest, UriPasswordIsLeftOut) {
  const std::string url = "postgresql://me:S3cr3tPw@db.example:5433/results";
  expect_redacted(url, {"S3cr3tPw"}, {"db.example", "results"});
  EXPECT_EQ(display_postgres_location(url), "postgresql://me@db.example:5433/results");
  EXPECT_EQ(display_postgres_location("postgres://me:S3cr3tPw@[::1]/results"),
            "postgres://me@[::1]/results");
}

TEST(PostgresLocationTest, QueryPasswordIsLeftOutAndTheOtherParametersKept) {
  const std::string url =
      "postgresql://me@db.example/results?password=S3cr3tPw&sslmode=require&sslpassword=K3yPw";
  expect_redacted(url, {"S3cr3tPw", "K3yPw", "password"}, {"db.example", "results"});
  EXPECT_EQ(display_postgres_location(url), "postgresql://me@db.example/results?sslmode=require");
}

TEST(PostgresLocationTest, KeyValuePasswordIsLeftOut) {
  const std::string conninfo = "host=db.example port=5433 dbname=results user=me password=S3cr3tPw";
  expect_redacted(conninfo, {"S3cr3tPw"}, {"db.example", "results"});
  EXPECT_EQ(display_postgres_location(conninfo),
            "user=me dbname=results host=db.example port=5433");
  EXPECT_EQ(display_postgres_location("host=/tmp dbname='my results' password='S3cr3t Pw'"),
            "dbname='my results' host=/tmp");
}

TEST(PostgresLocationTest, PercentEncodedPasswordIsLeftOut) {
  const std::string url = "postgresql://me:S3cr%33t%40Pw@db.example/results";
  expect_redacted(url, {"S3cr", "%33", "S3cr3t@Pw"}, {"db.example", "results"});
  EXPECT_EQ(display_postgres_location(url), "postgresql://me@db.example/results");
}

TEST(PostgresLocationTest, MalformedUriShowsOnlySchemeHostAndDatabase) {
  const std::string url = "postgresql://u:S3cr3tPw@[::1/results";
  store::PostgresLocation parsed = parse_postgres_location(url);
  EXPECT_FALSE(parsed.parsed);
  EXPECT_EQ(parsed.display, "postgresql://[::1/results");
  EXPECT_NE(parsed.problem.find("\"]\""), std::string::npos) << parsed.problem;
  expect_redacted(url, {"S3cr3tPw", "u:"}, {"[::1", "results"});
  // A '?' before the last '@' leaves no telling the credentials from the host: nothing shown.
  EXPECT_EQ(display_postgres_location("postgresql://u:S3c?r3tPw@[::1/results"),
            "<unparsable PostgreSQL connection string>");
}

TEST(PostgresLocationTest, UnencodedAtOrSlashInThePasswordIsRefusedNotShown) {
  // libpq would end the password at the first '@' or '/' and show the rest as host or database.
  for (const std::string url : {"postgresql://me:S3cr@3tPw@db.example/results",
                                "postgresql://me:S3cr/3tPw@db.example/results"}) {
    store::PostgresLocation parsed = parse_postgres_location(url);
    EXPECT_FALSE(parsed.parsed) << url;
    EXPECT_EQ(parsed.display, "postgresql://db.example/results");
    expect_redacted(url, {"S3cr", "3tPw"}, {"db.example"});
  }
}

TEST(PostgresLocationTest, MalformedKeyValueStringIsNotEchoed) {
  const std::string conninfo = "host=db.example password=S3cr3t Pw0rd dbname=results";
  store::PostgresLocation parsed = parse_postgres_location(conninfo);
  EXPECT_FALSE(parsed.parsed);
  EXPECT_EQ(parsed.display, "<unparsable PostgreSQL connection string>");
  expect_redacted(conninfo, {"S3cr3t", "Pw0rd"}, {});
  EXPECT_NE(parsed.problem.find("missing"), std::string::npos) << parsed.problem;
}

TEST(PostgresLocationTest, KeyValueStringsAreRecognisedAndFilePathsAreNot) {
  for (const char* location :
       {"postgresql://h/db", "postgres://h/db", "host=/tmp dbname=x", " dbname = x", "hots=typo"})
    EXPECT_TRUE(store::is_postgres_location(location)) << location;
  for (const char* location :
       {"results.db", "/tmp/a=b.db", "./host=x.db", "runs 2=3.db", "", "postgresql:/h/db", "=x"})
    EXPECT_FALSE(store::is_postgres_location(location)) << location;
  for (const char* location : {"mysql://u:p@h/db", "postgresql:/u:p@h/db", "postgress://h"})
    EXPECT_TRUE(store::is_other_url(location)) << location;
  for (const char* location : {"results.db", "/tmp/x:/y.db", "postgresql://h/db", "a=b:/c"})
    EXPECT_FALSE(store::is_other_url(location)) << location;
}

TEST(PostgresLocationTest, ScrubbedMessagesKeepOptionNamesAndPunctuationOnly) {
  EXPECT_EQ(store::scrub_libpq_message("invalid URI query parameter: \"sslmod\""),
            "invalid URI query parameter: \"...\"");
  EXPECT_EQ(store::scrub_libpq_message("invalid connection option \"sslmode\""),
            "invalid connection option \"sslmode\"");
  EXPECT_EQ(store::scrub_libpq_message("matching \"]\" in URI: \"postgresql://u:pw@[::1\""),
            "matching \"]\" in URI: \"...\"");
  EXPECT_EQ(store::scrub_libpq_message("unterminated \"abc"), "unterminated \"...");
  EXPECT_EQ(store::without_secrets("password S3cr3t for S3cr3t", {"S3cr3t", ""}),
            "password *** for ***");
}

}  // namespace
}  // namespace dlbench
