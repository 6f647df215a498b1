#include "bench/report/report_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "bench/report/framework_table.h"
#include "bench/report/machine_card.h"
#include "bench/report/max_batch_view.h"
#include "bench/report/names.h"
#include "bench/report/quality_table.h"
#include "bench/report/relative_view.h"
#include "bench/report/scaling_table.h"
#include "bench/report/telemetry_view.h"
#include "bench/result/repeats.h"
#include "bench/store/max_batch.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::report {
namespace {

using store::RunRecord;

// Without a selection a report covers the newest suite, or else this many newest runs.
constexpr int kDefaultRuns = 50;

std::string gpu_suffix(const std::string& name) {
  if (name.rfind("gpu", 0) != 0) return "";
  std::size_t dot = name.find('.');
  return dot == std::string::npos ? "" : name.substr(dot + 1);
}

// Bytes are shown in GiB; everything else in its own unit.
std::string shown_unit(const std::string& unit) {
  return unit == "B" || unit == "bytes" ? "GiB" : unit;
}
double shown_value(const std::string& unit, double v) {
  return unit == "B" || unit == "bytes" ? v / kGiB : v;
}

std::string json_text(const nlohmann::json& env, const char* section, const char* key) {
  if (!env.contains(section) || !env[section].contains(key) || env[section][key].is_null())
    return "";
  const nlohmann::json& v = env[section][key];
  return v.is_string() ? v.get<std::string>() : dump_json(v);
}

}  // namespace

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string mode_text(const RunRecord& r) {
  return r.beam() > 1 ? r.mode + " " + r.beam_text() : r.mode;
}

std::string run_label(const RunRecord& r) {
  std::string label = model_label(r.model) + " " + r.mode + " " + precision_label(r.precision) +
                      " b" + std::to_string(r.batch);
  if (r.input_size) label += " " + r.input_size_text();
  if (r.beam() > 1) label += " " + r.beam_text();
  if (r.framework != "native") label += " " + r.framework;
  if (int n = run_replicas(r); n > 1) label += " x" + std::to_string(n);
  return label + " #" + std::to_string(r.id);
}

std::string status_text(const RunRecord& r) {
  if (r.status == "ok") return "ok";
  if (r.status == "interrupted") return r.error.empty() ? "interrupted" : r.error;
  return r.status + ": " + r.error;
}

std::vector<result::NoiseWarning> run_warnings(const RunRecord& r) {
  return r.measured() ? result::stored_noise_warnings(r.result)
                      : std::vector<result::NoiseWarning>{};
}

bool is_reported_telemetry(const std::string& name) {
  return shown_metric(name) != nullptr;
}

double gpu_telemetry(const RunRecord& r, const std::string& suffix, bool use_max) {
  double best = NAN;
  for (const store::TelemetryMetricRecord& t : r.telemetry) {
    const std::optional<double>& v = use_max ? t.max : t.mean;
    if (gpu_suffix(t.name) == suffix && v) best = std::isnan(best) ? *v : std::max(best, *v);
  }
  return best;
}

double metric(const RunRecord& r, const std::string& tag) {
  const store::MetricRecord* m = r.find_metric(tag);
  return m ? m->value : NAN;
}

double allocator_peak_gib(const RunRecord& r) {
  const double peer = metric(r, "memory/peak_gib");
  return std::isnan(peer) ? metric(r, "memory/allocated_peak_gib") : peer;
}

namespace {

// A run's input size for a table cell; "-" for models that take none (NCF's and Word2Vec's
// pairs), as `dlbench runs` prints it.
std::string input_text(const RunRecord& r) {
  return r.input_size ? std::to_string(r.input_size) : "-";
}

// The GPUs' energy counters over the measured phase: their increase (J) and their mean rate, the
// mean board power (W); NaN without GPU energy telemetry.
struct GpuEnergy {
  double joules = NAN;
  double mean_w = NAN;
};

GpuEnergy gpu_energy(const RunRecord& r) {
  GpuEnergy e;
  for (const store::TelemetryMetricRecord& t : r.telemetry)
    if (gpu_suffix(t.name) == "energy" && t.total) {
      e.joules = (std::isnan(e.joules) ? 0 : e.joules) + *t.total;
      if (t.mean) e.mean_w = (std::isnan(e.mean_w) ? 0 : e.mean_w) + *t.mean;
    }
  return e;
}

}  // namespace

double energy_per_sample(const RunRecord& r) {
  const double joules = gpu_energy(r).joules;
  double seconds = r.result.value("measured_seconds", 0.0);
  double samples = r.throughput * seconds;
  return !std::isnan(joules) && samples > 0 ? joules / samples : NAN;
}

ReportData load_report(store::Store& store, const Selection& s) {
  ReportData data;
  data.source = store.location();
  data.generated_unix_s = std::time(nullptr);
  store::RunFilter filter;
  if (s.last_suite || !s.suite.empty()) {
    std::vector<store::SuiteRecord> suites = store.suites(s.suite);
    if (suites.empty())
      throw Error(ErrorKind::kUsage,
                  s.suite.empty() ? "no suite in " + store.location()
                                  : "no suite '" + s.suite + "' in " + store.location(),
                  "run 'dlbench suite quick' first, or pick runs with --runs");
    filter.suite_invocation = suites.front().invocation;
    data.scope = "suite " + suites.front().name + " (" + suites.front().invocation + ")";
  } else if (!s.ids.empty()) {
    filter.ids = s.ids;
    data.scope = "runs";
    for (std::int64_t id : s.ids) data.scope += " " + std::to_string(id);
  } else if (!s.machine.empty()) {
    filter.machine = s.machine;
    data.scope = "machine " + s.machine;
  } else if (s.last > 0) {
    filter.last = s.last;
    data.scope = s.last == 1 ? "the newest run" : "the newest " + std::to_string(s.last) + " runs";
  } else {
    std::vector<store::SuiteRecord> suites = store.suites();
    if (!suites.empty()) return load_report(store, Selection{0, true, "", {}, ""});
    filter.last = kDefaultRuns;
    data.scope = "the newest runs";
  }
  std::vector<RunRecord> headers = store.list_runs(filter);
  if (headers.empty())
    throw Error(ErrorKind::kUsage, "no runs match (" + data.scope + ") in " + store.location(),
                "see 'dlbench runs list'");
  std::set<std::int64_t> machine_ids;
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    std::optional<RunRecord> full = store.get_run(it->id);
    if (!full) continue;  // deleted meanwhile
    if (machine_ids.insert(full->machine.id).second) data.machines.push_back(full->machine);
    (full->mode == "micro"        ? data.micro_runs
     : store::is_max_batch(*full) ? data.max_batch_runs
                                  : data.runs)
        .push_back(std::move(*full));
  }
  for (const store::MachineRecord& m : data.machines) data.measured[m.id] = measured_on(store, m);
  data.title = "dlbench report: " + data.scope;
  return data;
}

std::vector<Table> report_tables(const ReportData& d) {
  std::vector<Table> tables;

  const bool gpu = has_gpu_telemetry(d.runs);
  const std::map<std::int64_t, std::string> names = machine_names(d.machines);
  auto machine = [&](const RunRecord& r) {
    auto it = names.find(r.machine.id);
    return it != names.end() ? it->second : machine_name(r.machine);
  };
  Table runs{
      "runs",
      "Runs",
      "throughput = samples in the measured steps / their wall time (a sample is what the "
      "model counts: an image, a pair for the recommendation and embedding models, a "
      "sequence for the language models, a sentence pair for the translation models; the charts "
      "name the unit); tokens/s = a language model's sequences/s x its sequence length, "
      "padding included, or a translation model's source and target tokens per second, "
      "padding left out; step time over the "
      "measured steps; CV = coefficient of "
      "variation of step time; TFLOP/s = model FLOPs per sample x throughput; MFU = TFLOP/s "
      "/ the measured peak of the precision (the newest "
      "micro gemm of the machine when the run was stored)",
      {"run", "machine", "model", "mode", "precision", "batch", "input", "device", "status",
       "samples/s", "step p50 ms", "step p95 ms", "CV %", "TFLOP/s", "MFU %"},
      {}};
  // Language models' tokens/s, where a run has them.
  const bool tokens = std::any_of(d.runs.begin(), d.runs.end(), [](const RunRecord& r) {
    return std::isfinite(metric(r, "throughput/tokens_per_s"));
  });
  if (tokens) runs.columns.push_back("tokens/s");
  if (gpu) runs.columns.push_back("throttling");
  runs.columns.insert(runs.columns.end(), {"repeats", "repeat range %", "warnings"});
  bool repeated = false;
  for (const RunRecord& r : d.runs) {
    const nlohmann::json& st =
        r.result.contains("step_time_ms") ? r.result["step_time_ms"] : nlohmann::json::object();
    runs.rows.push_back({std::to_string(r.id), machine(r), r.model, mode_text(r),
                         precision_label(r.precision), std::to_string(r.batch), input_text(r),
                         r.device, status_text(r), r.measured() ? fixed(r.throughput, 2) : "",
                         fixed(st.value("median", NAN), 1), fixed(st.value("p95", NAN), 1),
                         fixed(100 * st.value("cv", NAN), 1),
                         fixed(metric(r, "compute/achieved_gflops") / 1000, 2),
                         fixed(100 * metric(r, "compute/mfu"), 1)});
    if (tokens) runs.rows.back().push_back(fixed(metric(r, "throughput/tokens_per_s"), 0));
    if (gpu) runs.rows.back().push_back(throttle_text(r));
    const std::vector<double> rates = result::repeat_throughputs(r.result);
    const result::SpreadStats spread = result::spread_stats(rates);
    repeated = repeated || !rates.empty();
    runs.rows.back().push_back(rates.empty() ? "" : std::to_string(rates.size()));
    runs.rows.back().push_back(rates.empty() ? "" : fixed(100 * spread.range, 1));
    // The noise warnings: their codes in a column, their text on the throughput's cell.
    const std::vector<result::NoiseWarning> warnings = run_warnings(r);
    runs.rows.back().push_back(result::warning_codes(warnings));
    std::string text;
    for (const result::NoiseWarning& w : warnings) text += (text.empty() ? "" : "; ") + w.text;
    if (!text.empty())
      runs.flags.push_back({runs.rows.size() - 1, "samples/s", run_label(r) + ": " + text});
  }
  if (repeated)
    runs.note +=
        "; a run with repeats (each built, warmed up and measured anew) shows the median "
        "repeat's throughput and step times; repeat range = (max - min) / median";
  if (!runs.flags.empty())
    runs.note += "; warnings = the run's noise warnings, whose text the HTML report gives";
  // Columns nobody fills are left out, as before repeats and warnings existed.
  const std::size_t warnings_at = runs.columns.size() - 1, repeats_at = warnings_at - 2;
  for (std::size_t c : {warnings_at, repeats_at + 1, repeats_at}) {
    if (c == warnings_at ? !runs.flags.empty() : repeated) continue;
    runs.columns.erase(runs.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : runs.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
  }
  tables.push_back(runs);
  tables.push_back(max_batch_table(d));

  // Against strict FP32 and against TF32 (what Ampere and Hopper run by default).
  Table speedup{"speedup",
                "Precision speedups",
                "throughput of the precision / throughput of strict FP32 (TF32 off), and of TF32, "
                "same machine, model, mode (and beam), batch, input and replicas",
                {"machine", "model", "mode", "batch", "input", "precision", "samples/s",
                 "x FP32 (strict)", "x TF32"},
                {}};
  std::map<std::string, double> fp32, tf32;
  auto group = [](const RunRecord& r) {
    return std::to_string(r.machine.id) + "|" + r.framework + "|" + r.model + "|" + r.mode + "|" +
           std::to_string(r.batch) + "|" + std::to_string(r.input_size) + "|" +
           std::to_string(run_replicas(r)) + "|" + run_launch(r) + "|" + std::to_string(r.beam());
  };
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok" || r.throughput <= 0) continue;
    if (r.precision == "fp32") fp32[group(r)] = r.throughput;
    if (r.precision == "tf32") tf32[group(r)] = r.throughput;
  }
  auto ratio = [&](const std::map<std::string, double>& base, const RunRecord& r) {
    auto it = base.find(group(r));
    return it == base.end() ? std::string() : fixed(r.throughput / it->second, 2);
  };
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok" || r.precision == "fp32") continue;
    std::string vs_fp32 = ratio(fp32, r), vs_tf32 = r.precision == "tf32" ? "" : ratio(tf32, r);
    if (vs_fp32.empty() && vs_tf32.empty()) continue;
    speedup.rows.push_back({machine(r), r.model, mode_text(r), std::to_string(r.batch),
                            input_text(r), precision_label(r.precision), fixed(r.throughput, 2),
                            vs_fp32, vs_tf32});
  }
  tables.push_back(speedup);
  if (spans_frameworks(d.runs)) tables.push_back(framework_table(d.runs));
  tables.push_back(quality_table(d.runs));
  for (const ScalingGroup& g : scaling_groups(d.runs)) tables.push_back(scaling_table(g));

  tables.push_back(telemetry_summary_table(d));
  Table telemetry{"telemetry",
                  "Telemetry of the measured phase, every metric",
                  "mean is time-weighted (or the whole-window figure); memory in GiB",
                  {"run", "metric", "unit", "mean", "p95", "max"},
                  {}};
  for (const RunRecord& r : d.runs)
    for (const store::TelemetryMetricRecord& t : r.telemetry) {
      if (!is_reported_telemetry(t.name)) continue;
      auto v = [&](const std::optional<double>& x) {
        return x ? fixed(shown_value(t.unit, *x), 2) : std::string();
      };
      telemetry.rows.push_back({std::to_string(r.id), t.name, shown_unit(t.unit), v(t.mean),
                                v(t.p95), t.reason.empty() ? v(t.max) : "n/a (" + t.reason + ")"});
    }
  tables.push_back(telemetry);

  Table memory{
      "memory",
      "Peak memory",
      "planned = the memory planner's peak for the model (weights, optimizer state, "
      "activations); allocator peak = the most the engine's own allocations held "
      "during the measured steps (workspaces included), or a peer framework's "
      "allocator peak; RSS = the process's peak resident memory" +
          std::string(gpu ? "; GPU = the most device memory in use seen by telemetry" : ""),
      {"run", "planned GiB", "activations GiB", "allocator peak GiB", "process peak RSS GiB",
       "GPU max GiB"},
      {}};
  for (const RunRecord& r : d.runs)
    if (r.status == "ok")
      memory.rows.push_back({std::to_string(r.id), fixed(metric(r, "memory/planned_gib"), 3),
                             fixed(metric(r, "memory/activations_gib"), 3),
                             fixed(allocator_peak_gib(r), 3),
                             fixed(metric(r, "memory/process_peak_rss_gib"), 3),
                             fixed(gpu_telemetry(r, "memory_used", true) / kGiB, 2)});
  if (!gpu) {  // a CPU-only report has no GPU memory column
    memory.columns.pop_back();
    for (auto& row : memory.rows) row.pop_back();
  }
  tables.push_back(memory);

  Table energy{"energy",
               "Energy per sample",
               "GPU board energy over the measured phase / samples processed (needs NVML energy "
               "counters; CPU-only runs have none); samples/J = its inverse; mean power = the "
               "energy counters' increase over the time they covered, summed over the GPUs",
               {"run", "energy J", "samples", "J/sample", "samples/J", "mean power W"},
               {}};
  for (const RunRecord& r : d.runs) {
    double e = energy_per_sample(r);
    if (std::isnan(e)) continue;
    double samples = r.throughput * r.result.value("measured_seconds", 0.0);
    energy.rows.push_back({std::to_string(r.id), fixed(e * samples, 1), fixed(samples, 0),
                           fixed(e, 3), fixed(1 / e, 1 / e < 10 ? 2 : 1),
                           fixed(gpu_energy(r).mean_w, 0)});
  }
  tables.push_back(energy);

  Table machines{"machines",
                 "Machines",
                 "a machine is one fingerprint of hardware and system software",
                 {"machine", "id", "fingerprint", "hostname", "CPU", "cores", "memory GiB", "OS",
                  "kernel", "GPUs", "driver", "CUDA", "cuDNN", "dlbench"},
                 {}};
  auto machine_name_of = [&](const store::MachineRecord& m) { return names.at(m.id); };
  for (const store::MachineRecord& m : d.machines) {
    const nlohmann::json& env = m.environment;
    std::string gpus;
    if (env.contains("gpus"))
      for (const nlohmann::json& g : env["gpus"])
        gpus += (gpus.empty() ? "" : "; ") + g.value("name", std::string("GPU"));
    if (gpus.empty()) gpus = "none";
    double mem = env.contains("host") ? env["host"].value("memory_bytes", 0.0) : 0.0;
    machines.rows.push_back(
        {machine_name_of(m), std::to_string(m.id), m.fingerprint.substr(0, 12), m.hostname,
         json_text(env, "host", "cpu_model"), json_text(env, "host", "cores"), fixed(mem / kGiB, 1),
         json_text(env, "host", "os"), json_text(env, "host", "kernel"), gpus,
         json_text(env, "gpu_software", "driver_version"),
         json_text(env, "gpu_software", "cuda_runtime"), json_text(env, "gpu_software", "cudnn"),
         json_text(env, "dlbench", "version") + " " + json_text(env, "dlbench", "git_hash")});
  }
  machines.text_columns = {"fingerprint", "hostname", "CPU",  "OS",    "kernel",
                           "GPUs",        "driver",   "CUDA", "cuDNN", "dlbench"};
  tables.push_back(machines);
  if (d.relative) tables.push_back(relative_table(*d.relative));
  return tables;
}

}  // namespace dlbench::report
