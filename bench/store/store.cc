#include "bench/store/store.h"

#include <cstdlib>
#include <filesystem>

#include "bench/store/postgres_connection.h"
#include "bench/store/sql_store.h"
#include "bench/store/sqlite_connection.h"
#include "engine/core/error.h"

namespace dlbench::store {

const MetricRecord* RunRecord::find_metric(const std::string& tag) const {
  for (const MetricRecord& m : metrics)
    if (m.tag == tag) return &m;
  return nullptr;
}

const TelemetryMetricRecord* RunRecord::find_telemetry(const std::string& name) const {
  for (const TelemetryMetricRecord& t : telemetry)
    if (t.name == name) return &t;
  return nullptr;
}

bool is_postgres_url(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

std::string default_location() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base;
  if (xdg && *xdg)
    base = xdg;
  else if (home && *home)
    base = std::filesystem::path(home) / ".local" / "share";
  else
    throw Error(ErrorKind::kResource, "neither XDG_DATA_HOME nor HOME is set",
                "pass --db PATH for the results database");
  return (base / "dlbench" / "results.db").string();
}

std::unique_ptr<Store> open_store(const std::string& location) {
  if (is_postgres_url(location)) return make_sql_store(open_postgres(location));
  std::string path = location.empty() ? default_location() : location;
  if (location.empty()) {
    // The default folder is ours to create; a --db folder is the user's to get right.
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  }
  return make_sql_store(open_sqlite(path));
}

}  // namespace dlbench::store
