#include "bench/store/export.h"

#include <cmath>
#include <cstdio>

#include "engine/core/json_text.h"

namespace dlbench::store {
namespace {

using nlohmann::json;

json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json to_json(const RunRecord& r) {
  json metrics = json::array();
  for (const MetricRecord& m : r.metrics)
    metrics.push_back({{"tag", m.tag},
                       {"value", number_or_null(m.value)},
                       {"unit", m.unit},
                       {"description", m.description}});
  json telemetry = json::array();
  for (const TelemetryMetricRecord& t : r.telemetry)
    telemetry.push_back({{"name", t.name},
                         {"label", t.label},
                         {"unit", t.unit},
                         {"kind", t.kind},
                         {"samples", t.samples},
                         {"mean", number_or_null(t.mean)},
                         {"min", number_or_null(t.min)},
                         {"max", number_or_null(t.max)},
                         {"p95", number_or_null(t.p95)},
                         {"total", number_or_null(t.total)},
                         {"total_unit", t.total_unit},
                         {"unavailable", t.reason.empty() ? json(nullptr) : json(t.reason)}});
  json samples = json::array();
  for (const TelemetrySeries& s : r.samples) {
    json values = json::array();
    for (double v : s.values) values.push_back(number_or_null(v));
    samples.push_back({{"name", s.name}, {"unit", s.unit}, {"t_s", s.t_s}, {"values", values}});
  }
  json doc = {
      {"id", r.id},
      {"created_unix_s", r.created_unix_s},
      {"status", r.status},
      {"error", r.error.empty() ? json(nullptr) : json(r.error)},
      {"framework", r.framework},
      {"model", r.model},
      {"mode", r.mode},
      {"precision", r.precision},
      {"device", r.device},
      {"batch", r.batch},
      {"input_size", r.input_size},
      {"throughput_samples_per_s", r.throughput},
      {"config", r.config},
      {"result", r.result},
      {"metrics", metrics},
      {"telemetry", telemetry},
      {"machine",
       {{"id", r.machine.id},
        {"fingerprint", r.machine.fingerprint},
        {"hostname", r.machine.hostname},
        {"description", r.machine.description},
        {"environment", r.machine.environment}}},
      {"suite", r.suite ? json{{"invocation", r.suite->invocation},
                               {"name", r.suite->name},
                               {"index", r.suite->index}}
                        : json(nullptr)},
  };
  // Telemetry samples only where the run was read with them (runs show, export): an import
  // stores them back (import.h).
  if (!samples.empty()) doc["samples"] = samples;
  return doc;
}

void export_json(const std::vector<RunRecord>& runs, std::ostream& out) {
  json doc = {{"schema", "dlbench.runs/1"}, {"runs", json::array()}};
  for (const RunRecord& r : runs) doc["runs"].push_back(to_json(r));
  out << dump_json(doc, 2) << "\n";
}

}  // namespace dlbench::store
