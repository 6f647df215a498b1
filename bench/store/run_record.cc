#include "bench/store/run_record.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "engine/core/hash.h"
#include "engine/core/json_text.h"

namespace dlbench::store {
namespace {

using nlohmann::json;

std::string fnv1a_hex(const std::string& text) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx",
                static_cast<unsigned long long>(fnv1a(text.data(), text.size())));
  return out;
}

std::string machine_description(const json& env) {
  std::string cpu = env.contains("host") ? env["host"].value("cpu_model", "CPU") : "CPU";
  std::string text = cpu;
  if (env.contains("host") && env["host"]["cores"].is_number())
    text += ", " + std::to_string(env["host"]["cores"].get<int>()) + " cores";
  const json& gpus = env.contains("gpus") ? env["gpus"] : json::array();
  if (gpus.empty()) return text + ", no GPU";
  std::string name = gpus[0].value("name", "GPU");
  return text + ", " + std::to_string(gpus.size()) + "x " + name;
}

const char* kind_name(telemetry::MetricKind k) {
  switch (k) {
    case telemetry::MetricKind::kLevel:
      return "level";
    case telemetry::MetricKind::kIntervalAverage:
      return "interval_average";
    case telemetry::MetricKind::kCounter:
      return "counter";
    case telemetry::MetricKind::kBitmask:
      return "bitmask";
  }
  return "level";
}

std::optional<double> value_of(const Reported<double>& r) {
  if (!r.available() || !std::isfinite(r.value())) return std::nullopt;
  return r.value();
}

void add_telemetry(RunRecord& record, const result::RunResult& result) {
  for (const telemetry::MetricSummary& m : result.telemetry->summary.metrics) {
    TelemetryMetricRecord r;
    r.name = m.spec.name;
    r.label = m.spec.label;
    r.unit = m.spec.unit;
    r.kind = kind_name(m.spec.kind);
    r.samples = std::int64_t(m.samples);
    // The whole-window figure is the honest mean where a source gives one (GPM, system CPU).
    r.mean = value_of(m.window.available() ? m.window : m.mean);
    r.min = value_of(m.min);
    r.max = value_of(m.max);
    r.p95 = value_of(m.p95);
    r.total = value_of(m.total);
    r.total_unit = m.spec.total_unit;
    r.reason = m.reason;
    record.telemetry.push_back(std::move(r));
  }
  const std::vector<telemetry::Sample>& samples = result.telemetry->samples;
  if (samples.empty()) return;
  std::int64_t t0 = samples.front().tick.monotonic_ns;
  for (std::size_t col = 0; col < result.telemetry->metrics.size(); ++col) {
    const telemetry::MetricSpec& spec = result.telemetry->metrics[col];
    if (spec.kind == telemetry::MetricKind::kBitmask) continue;
    TelemetrySeries series{spec.name, spec.unit, {}, {}};
    for (std::size_t i = 0; i < samples.size(); ++i) {
      // Counters are stored as their rate over the interval ending at the sample, as the
      // monitor's CSV does: a cumulative count is meaningless on a timeline.
      double v =
          spec.kind == telemetry::MetricKind::kCounter
              ? (i == 0 ? NAN : telemetry::interval_rate(spec, samples[i - 1], samples[i], col))
              : samples[i].values[col];
      if (!std::isfinite(v)) continue;
      series.t_s.push_back(double(samples[i].tick.monotonic_ns - t0) * 1e-9);
      series.values.push_back(v);
    }
    if (!series.values.empty()) record.samples.push_back(std::move(series));
  }
}

}  // namespace

MachineRecord machine_record(const json& environment) {
  json identity = json::object();
  for (const char* key : {"host", "gpu_software", "gpus"})
    if (environment.contains(key)) identity[key] = environment[key];
  if (identity.contains("gpus"))
    for (json& g : identity["gpus"]) {
      g.erase("pcie_generation_current");
      g.erase("pcie_width_current");
    }
  MachineRecord m;
  m.fingerprint = fnv1a_hex(dump_json(identity));
  m.hostname = environment.contains("host") ? environment["host"].value("hostname", "") : "";
  m.description = machine_description(environment);
  m.environment = environment;
  return m;
}

void set_config_columns(RunRecord& r, const result::RunConfig& c) {
  r.framework = c.framework;
  r.model = c.model;
  r.mode = to_string(c.mode);
  r.precision = to_string(c.precision);
  r.device = to_string(c.launch.device);
  r.batch = c.batch.value_or(0);
  r.input_size = c.input_size;
}

RunRecord run_record(const result::RunResult& result) {
  RunRecord r;
  r.created_unix_s = std::time(nullptr);
  set_config_columns(r, result.config);
  if (result.data_parallel) {
    // "2x cuda (threads)": the device column names every replica.
    const result::DataParallel& dp = *result.data_parallel;
    r.device = std::to_string(dp.replicas) + "x " +
               (result.config.launch.device.type == DeviceType::kCpu ? "cpu" : "cuda") + " (" +
               dp.launch + ")";
  }
  json doc = result::to_json(result);
  r.config = doc["config"];
  r.machine = machine_record(result.environment);
  doc.erase("environment");  // kept once per machine
  // The run keeps the dlbench build it ran with; the machine row does not (fingerprint).
  if (result.environment.contains("dlbench")) doc["dlbench"] = result.environment["dlbench"];
  r.result = doc;
  r.throughput = result.throughput;
  if (!result.interrupted.empty()) {
    r.status = "interrupted";
    r.error = result.interrupted;
  }
  for (const result::Metric& m : result.metrics)
    r.metrics.push_back({m.tag, m.value, m.unit, m.description});
  if (result.telemetry) add_telemetry(r, result);
  return r;
}

RunRecord failed_run_record(const result::RunConfig& config, const json& environment,
                            const std::string& error) {
  RunRecord r;
  r.created_unix_s = std::time(nullptr);
  r.status = "failed";
  r.error = error;
  set_config_columns(r, config);
  r.config = {{"model", r.model},
              {"framework", r.framework},
              {"mode", r.mode},
              {"precision", r.precision},
              {"device", r.device},
              {"batch", r.batch},
              {"input_size", r.input_size},
              {"warmup_steps", config.warmup_steps},
              {"steps", config.steps},
              {"seconds", config.seconds}};
  r.machine = machine_record(environment);
  return r;
}

}  // namespace dlbench::store
