// The fixture of every test against a real PostgreSQL server: DLBENCH_TEST_POSTGRES_URL names
// it (.ci/run starts a throwaway one); without it the test is skipped. Each test starts from
// an empty database: dlbench's tables are dropped first (the tests share one server and never
// run two at once: CTest's RESOURCE_LOCK postgres).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bench/store/postgres_connection.h"

namespace dlbench::testing {

class FreshPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("DLBENCH_TEST_POSTGRES_URL");
    if (url == nullptr || *url == '\0') GTEST_SKIP() << "DLBENCH_TEST_POSTGRES_URL is not set";
    url_ = url;
    auto c = store::open_postgres(url_);
    for (const char* t : {"telemetry_samples", "telemetry_summary", "results", "runs", "machines",
                          "suites", "schema_version"})
      c->query(std::string("DROP TABLE IF EXISTS ") + t + " CASCADE", {});
  }
  std::string url_;  // the server's URL, for store::open_store
};

}  // namespace dlbench::testing
