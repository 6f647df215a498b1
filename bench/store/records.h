// What the results database holds, as plain structs shared by every backend, the report and the
// command line. One schema for SQLite and PostgreSQL (schema.cc); a RunRecord is one row of
// `runs` with its children in `results`, `telemetry_summary` and `telemetry_samples`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlbench::store {

// One tagged metric of a run (`results`): "throughput/samples_per_s" = 812.4 samples/s.
struct MetricRecord {
  std::string tag;
  double value = 0;
  std::string unit;
  std::string description;
};

// One telemetry metric summarized over the measured phase (`telemetry_summary`). A value the
// machine did not provide is empty, and `reason` says why.
struct TelemetryMetricRecord {
  std::string name;  // "gpu0.sm_active", "process.cpu"
  std::string label;
  std::string unit;
  std::string kind;  // level, interval_average, counter, bitmask
  std::int64_t samples = 0;
  std::optional<double> mean, min, max, p95, total;
  std::string total_unit;
  std::string reason;
};

// The samples of one telemetry metric (`telemetry_samples`, one row per sample), seconds since
// the first sample of the window.
struct TelemetrySeries {
  std::string name;
  std::string unit;
  std::vector<double> t_s;
  std::vector<double> values;
};

// A machine, deduplicated by a fingerprint of its hardware and software environment.
struct MachineRecord {
  std::int64_t id = 0;
  std::string fingerprint;  // hex; the first 12 characters name it on the command line
  std::string hostname;
  std::string description;  // "AMD EPYC, 2 cores, no GPU" / "1x NVIDIA H100 80GB HBM3"
  nlohmann::json environment = nlohmann::json::object();  // dlbench info --json
  std::int64_t first_seen_unix_s = 0;
};

// The run a suite invocation made, so --resume knows what already landed.
struct SuiteLink {
  std::string invocation;  // unique per `dlbench suite` call
  std::string name;        // the suite's name ("quick-cpu")
  int index = -1;          // position in the suite file
  std::string key;         // the entry's configuration, to match on resume
};

struct RunRecord {
  std::int64_t id = 0;  // assigned by the store
  std::int64_t created_unix_s = 0;
  // ok, failed, or interrupted (stopped by a signal: what it measured before, if anything)
  std::string status = "ok";
  std::string error;  // failed runs: the message; interrupted ones: what stopped them, when
  std::string framework = "native";
  std::string model, mode, precision, device;
  std::int64_t batch = 0;
  int input_size = 0;
  double throughput = 0;  // samples/s; 0 where nothing was measured (see measured())
  std::optional<SuiteLink> suite;
  nlohmann::json config = nlohmann::json::object();  // the run's full configuration
  nlohmann::json result = nlohmann::json::object();  // dlbench.run/1 without the environment
  MachineRecord machine;                             // id filled in by the store
  std::vector<MetricRecord> metrics;
  std::vector<TelemetryMetricRecord> telemetry;  // filled by get_run
  std::vector<TelemetrySeries> samples;          // filled by get_run

  // Whether throughput is a measured figure: an ok run, or an interrupted one that got through
  // at least one measured step (its rate covers those steps only).
  bool measured() const;
  const MetricRecord* find_metric(const std::string& tag) const;
  const TelemetryMetricRecord* find_telemetry(const std::string& name) const;
  // The input size as labels show it: "224px" for images, "128x128x128" for volumes (a run whose
  // sample unit is volumes), "128 tok" for the language and translation models' sequences,
  // empty for a model that takes no size.
  std::string input_size_text() const;
  // The hypotheses a translation model's inference (or a max-batch search of it) kept per
  // sentence (--beam); 1 where it decoded greedily or did not decode, and for training (whose
  // --beam translated a test set after the measured steps).
  int beam() const;
  // "beam 5" for a beam search, as labels show it; empty otherwise.
  std::string beam_text() const;
};

// A `dlbench suite` invocation.
struct SuiteRecord {
  std::string invocation;
  std::string name;
  std::string file;
  std::int64_t started_unix_s = 0;
  int planned_runs = 0;
  int landed_runs = 0;  // filled when read: runs stored with status ok
};

// What `Store::import_runs` did (or, for a dry run, would do).
struct ImportCounts {
  int imported = 0;
  int skipped = 0;  // already stored (import.h: a run's identity)
};

// Which runs `runs list`, `runs export` and reports want; empty fields do not filter.
struct RunFilter {
  int last = 0;  // the newest N; 0: all
  std::string model;
  std::string machine;  // machine id, hostname or fingerprint prefix
  std::string suite_invocation;
  std::vector<std::int64_t> ids;
};

}  // namespace dlbench::store
