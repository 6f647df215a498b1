#include "bench/store/store.h"

#include <cstdlib>
#include <filesystem>

#include "bench/result/run_result.h"
#include "bench/store/max_batch.h"
#include "bench/store/postgres_connection.h"
#include "bench/store/postgres_location.h"
#include "bench/store/sql_store.h"
#include "bench/store/sqlite_connection.h"
#include "engine/core/error.h"

namespace dlbench::store {

bool RunRecord::measured() const {
  if (status == "ok") return true;
  if (status != "interrupted" || !result.is_object()) return false;
  const auto steps = result.find("measured_steps");
  return steps != result.end() && steps->is_number() && steps->get<double>() > 0;
}

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

int RunRecord::beam() const {
  // A training run's --beam searched its test set's translations, outside the measured steps:
  // not its workload.
  if (!config.is_object() || searched_mode(*this) != "infer") return 1;
  const auto it = config.find("beam");
  return it != config.end() && it->is_number_integer() ? it->get<int>() : 1;
}

std::string RunRecord::beam_text() const {
  return beam() > 1 ? "beam " + std::to_string(beam()) : "";
}

std::string RunRecord::input_size_text() const {
  if (input_size <= 0) return "";
  const std::string side = std::to_string(input_size);
  const auto found = result.is_object() ? result.find("sample_unit") : result.end();
  const std::string unit =
      found != result.end() && found->is_string() ? found->get<std::string>() : "";
  const result::InputSizeKind kind = result::input_size_kind(unit);
  if (kind == result::InputSizeKind::kImageSide) return side + "px";
  if (kind == result::InputSizeKind::kSequenceLength) return side + " tok";
  std::string text = side;
  for (int i = 0; i < 2; ++i) text += "x" + side;
  return text;
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
  if (is_postgres_location(location)) return make_sql_store(open_postgres(location));
  // Not echoed: a mistyped URL may hold a password.
  if (is_other_url(location))
    throw Error(ErrorKind::kUsage,
                "--db " + location.substr(0, location.find(':') + 1) +
                    "... is neither a PostgreSQL URL nor an SQLite file",
                "write postgresql://USER@HOST/DATABASE (or postgres://), or a file path");
  std::string path = location.empty() ? default_location() : location;
  if (location.empty()) {
    // The default folder is ours to create; a --db folder is the user's to get right.
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  }
  return make_sql_store(open_sqlite(path));
}

}  // namespace dlbench::store
