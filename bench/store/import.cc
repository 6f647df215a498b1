#include "bench/store/import.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/error.h"

namespace dlbench::store {
namespace {

using nlohmann::json;

std::optional<double> optional_number(const json& v) {
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

std::string text_or_empty(const json& doc, const char* key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// One run of the export; throws json exceptions on a missing or mistyped field.
RunRecord run_from_json(const json& j) {
  RunRecord r;
  r.id = j.at("id").get<std::int64_t>();
  r.created_unix_s = j.at("created_unix_s").get<std::int64_t>();
  r.status = j.at("status").get<std::string>();
  r.error = text_or_empty(j, "error");
  r.framework = j.at("framework").get<std::string>();
  r.model = j.at("model").get<std::string>();
  r.mode = j.at("mode").get<std::string>();
  r.precision = j.at("precision").get<std::string>();
  r.device = j.at("device").get<std::string>();
  r.batch = j.at("batch").get<std::int64_t>();
  r.input_size = j.at("input_size").get<int>();
  r.throughput = j.at("throughput_samples_per_s").get<double>();
  r.config = j.value("config", json::object());
  r.result = j.value("result", json::object());
  const json& m = j.at("machine");
  r.machine.fingerprint = m.at("fingerprint").get<std::string>();
  r.machine.hostname = text_or_empty(m, "hostname");
  r.machine.description = text_or_empty(m, "description");
  r.machine.environment = m.value("environment", json::object());
  if (r.machine.fingerprint.empty()) throw std::invalid_argument("empty machine fingerprint");
  if (const auto s = j.find("suite"); s != j.end() && s->is_object())
    r.suite = SuiteLink{s->at("invocation").get<std::string>(), s->at("name").get<std::string>(),
                        s->value("index", -1), s->value("key", std::string())};
  for (const json& x : j.value("metrics", json::array()))
    r.metrics.push_back({x.at("tag").get<std::string>(),
                         optional_number(x.at("value")).value_or(NAN), text_or_empty(x, "unit"),
                         text_or_empty(x, "description")});
  for (const json& x : j.value("telemetry", json::array())) {
    TelemetryMetricRecord t;
    t.name = x.at("name").get<std::string>();
    t.label = text_or_empty(x, "label");
    t.unit = text_or_empty(x, "unit");
    t.kind = text_or_empty(x, "kind");
    t.samples = x.value("samples", std::int64_t{0});
    t.mean = optional_number(x.value("mean", json()));
    t.min = optional_number(x.value("min", json()));
    t.max = optional_number(x.value("max", json()));
    t.p95 = optional_number(x.value("p95", json()));
    t.total = optional_number(x.value("total", json()));
    t.total_unit = text_or_empty(x, "total_unit");
    t.reason = text_or_empty(x, "unavailable");
    r.telemetry.push_back(std::move(t));
  }
  // Samples, where an export carries them: [{name, unit, t_s: [...], values: [...]}].
  for (const json& x : j.value("samples", json::array())) {
    TelemetrySeries s{x.at("name").get<std::string>(), text_or_empty(x, "unit"), {}, {}};
    for (const json& t : x.at("t_s")) s.t_s.push_back(t.get<double>());
    for (const json& v : x.at("values")) s.values.push_back(optional_number(v).value_or(NAN));
    r.samples.push_back(std::move(s));
  }
  return r;
}

// A name the store keeps once per run (a result's tag, a telemetry metric) that the file lists
// twice: the database would refuse the run half-way through the import. Empty when none is.
template <class Record, class Name>
std::string repeated_name(const std::vector<Record>& records, Name name) {
  std::set<std::string> seen;
  for (const Record& r : records)
    if (!seen.insert(name(r)).second) return name(r);
  return "";
}

}  // namespace

std::vector<RunRecord> parse_runs_json(const std::string& text, const std::string& origin) {
  const std::string hint = "give a file that 'dlbench runs export --format json' wrote";
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    throw Error(ErrorKind::kUsage, origin + " is not JSON (truncated or corrupt?)", hint);
  if (!doc.is_object() || text_or_empty(doc, "schema") != kRunsSchema)
    throw Error(ErrorKind::kUsage,
                origin + " is not a " + std::string(kRunsSchema) + " document (schema '" +
                    (doc.is_object() ? text_or_empty(doc, "schema") : std::string()) + "')",
                hint);
  if (!doc.contains("runs") || !doc["runs"].is_array())
    throw Error(ErrorKind::kUsage, origin + " has no \"runs\" array", hint);
  std::vector<RunRecord> runs;
  for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
    try {
      runs.push_back(run_from_json(doc["runs"][i]));
    } catch (const std::exception& e) {
      throw Error(ErrorKind::kUsage,
                  origin + ": run " + std::to_string(i + 1) + " is incomplete (" + e.what() + ")",
                  hint);
    }
    const RunRecord& r = runs.back();
    for (const auto& [what, name] :
         {std::pair{"metric", repeated_name(r.metrics, [](const auto& m) { return m.tag; })},
          std::pair{"telemetry metric",
                    repeated_name(r.telemetry, [](const auto& t) { return t.name; })}})
      if (!name.empty())
        throw Error(ErrorKind::kUsage,
                    origin + ": run " + std::to_string(i + 1) + " lists " + what + " '" + name +
                        "' twice (edited by hand?)",
                    hint);
  }
  return runs;
}

std::vector<RunRecord> read_runs_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kResource, "cannot read " + path, "check the path and its permissions");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_runs_json(text.str(), path);
}

bool same_run(const RunRecord& a, const RunRecord& b) {
  return a.machine.fingerprint == b.machine.fingerprint && a.created_unix_s == b.created_unix_s &&
         a.framework == b.framework && a.model == b.model && a.mode == b.mode &&
         a.precision == b.precision && a.device == b.device && a.batch == b.batch &&
         a.input_size == b.input_size;
}

}  // namespace dlbench::store
