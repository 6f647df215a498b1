#include "bench/report/telemetry_view.h"

#include <algorithm>
#include <cmath>

#include "bench/report/names.h"
#include "bench/result/noise.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

const char* const kDegreesC =
    "\xC2\xB0"
    "C";

// The clock-event summaries of the run's GPUs, from its stored telemetry summary.
std::vector<const json*> clock_events(const RunRecord& r) {
  std::vector<const json*> out;
  // References into the run itself: the pointers must outlive this function.
  if (!r.result.contains("telemetry") || !r.result["telemetry"].is_object()) return out;
  const json& telemetry = r.result["telemetry"];
  if (!telemetry.contains("metrics") || !telemetry["metrics"].is_object()) return out;
  const json& metrics = telemetry["metrics"];
  for (const auto& [name, m] : metrics.items())
    if (gpu_index(name) >= 0 && name.substr(name.find('.') + 1) == "clock_events" &&
        m.is_object() && m.value("mask", json()).is_number())
      out.push_back(&m);
  return out;
}

// Temperature and memory are shown at their highest, the rest as means.
bool uses_max(const ShownMetric& m) {
  return m.name == "temperature" || m.unit == "GiB";
}

std::string percent(double share) {
  return fixed(share, share < 10 ? 1 : 0) + " %";
}

// The highest value of a numeric field over the machine's GPUs; NaN when none has it.
double highest_gpu_field(const RunRecord& r, const char* key) {
  const json& env = r.machine.environment;
  double best = NAN;
  if (env.is_object() && env.contains("gpus") && env["gpus"].is_array())
    for (const json& g : env["gpus"])
      if (g.is_object() && g.value(key, json()).is_number())
        best = std::isnan(best) ? g[key].get<double>() : std::max(best, g[key].get<double>());
  return best;
}

}  // namespace

const std::vector<ShownMetric>& shown_metrics() {
  static const std::vector<ShownMetric> metrics = {
      {"sm_active", true, "SM activity", "%", "SM %"},
      {"tensor_active", true, "tensor-core activity", "%", "tensor %"},
      {"dram_active", true, "DRAM bandwidth used, % of peak", "%", "DRAM % of peak"},
      {"sm_clock", true, "SM clock", "MHz", "SM clock MHz"},
      {"memory_clock", true, "memory clock", "MHz", "memory clock MHz"},
      {"power", true, "board power", "W", "power W"},
      {"temperature", true, "GPU temperature", kDegreesC, std::string("temp. max ") + kDegreesC},
      {"memory_used", true, "GPU memory used", "GiB", "GPU memory max GiB"},
      {"kernel_busy", true, "kernel busy (time any kernel ran)", "%", "kernel busy %"},
      // Before Hopper there is no GPM DRAM figure; NVML's memory busy is the nearest there is.
      {"memory_busy", true, "memory busy (time memory was read or written)", "%", "memory busy %"},
      {"process.cpu", false, "process CPU", "% of one core", "CPU % of a core"},
      {"process.rss", false, "process resident memory", "GiB", "RSS max GiB"},
      {"system.memory_used", false, "host memory used", "GiB", "host memory max GiB"},
  };
  return metrics;
}

int gpu_index(const std::string& name) {
  if (name.rfind("gpu", 0) != 0) return -1;
  std::size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 3) return -1;
  for (std::size_t i = 3; i < dot; ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  return std::stoi(name.substr(3, dot - 3));
}

const ShownMetric* shown_metric(const std::string& name) {
  const int gpu = gpu_index(name);
  const std::string key = gpu >= 0 ? name.substr(name.find('.') + 1) : name;
  for (const ShownMetric& m : shown_metrics())
    if (m.name == key && m.per_gpu == (gpu >= 0)) return &m;
  return nullptr;
}

double shown_value(const ShownMetric& m, double stored) {
  return m.unit == "GiB" ? stored / kGiB : stored;
}

double power_limit_w(const RunRecord& r) {
  return highest_gpu_field(r, "power_limit_w");
}

double max_sm_clock_mhz(const RunRecord& r) {
  return highest_gpu_field(r, "max_sm_clock_mhz");
}

std::string throttle_text(const RunRecord& r) {
  const std::vector<const json*> events = clock_events(r);
  if (events.empty()) return "";
  std::string text;
  // The reasons that hold the clocks down, as the noise warnings name them too.
  for (const auto& [flag, said] : result::throttle_reasons()) {
    double share = NAN;
    bool seen = false;
    for (const json* m : events) {
      const json& flags = m->value("flags", json::array());
      seen = seen || std::find(flags.begin(), flags.end(), flag) != flags.end();
      const json& shares = m->value("share_percent", json::object());
      if (shares.is_object() && shares.value(flag, json()).is_number())
        share = std::isnan(share) ? shares[flag].get<double>()
                                  : std::max(share, shares[flag].get<double>());
    }
    if (!seen) continue;
    text += text.empty() ? "throttled: " : ", ";
    text += said;
    // Runs stored before the share was recorded know only that the flag was set at all.
    text += std::isnan(share) ? " at some point in the run"
                              : " during " + percent(share) + " of the run";
  }
  return text.empty() ? "not throttled" : text;
}

bool throttled(const RunRecord& r) {
  return throttle_text(r).rfind("throttled", 0) == 0;
}

bool has_gpu_telemetry(const std::vector<RunRecord>& runs) {
  for (const RunRecord& r : runs)
    for (const store::TelemetryMetricRecord& t : r.telemetry)
      if (gpu_index(t.name) >= 0 && t.mean) return true;
  return false;
}

Table telemetry_summary_table(const ReportData& d) {
  Table t{"telemetry_summary",
          "Telemetry per run",
          has_gpu_telemetry(d.runs)
              ? "means over the measured phase (temperature and memory: maximum); with several "
                "GPUs, the highest GPU; power limit = NVML's power-management limit when the run "
                "started; SM clock % of max = the mean SM clock / NVML's maximum SM clock"
              : "means over the measured phase (memory: maximum)",
          {"run", "throttling"},
          {}};
  std::vector<const ShownMetric*> metrics;
  for (const ShownMetric& m : shown_metrics()) {
    metrics.push_back(&m);
    t.columns.push_back(m.column);
    if (m.name == "power") t.columns.push_back("power limit W");
    if (m.name == "sm_clock") t.columns.push_back("SM clock % of max");
  }
  for (const RunRecord& r : d.runs) {
    std::vector<std::string> row = {run_label(r), throttle_text(r)};
    for (const ShownMetric* m : metrics) {
      const bool max = uses_max(*m);
      double v = NAN;
      if (m->per_gpu) {
        v = gpu_telemetry(r, m->name, max);
      } else if (const store::TelemetryMetricRecord* rec = r.find_telemetry(m->name)) {
        const std::optional<double>& x = max ? rec->max : rec->mean;
        v = x ? *x : NAN;
      }
      row.push_back(fixed(shown_value(*m, v), m->unit == "GiB" ? 2 : 0));
      if (m->name == "power") row.push_back(fixed(power_limit_w(r), 0));
      if (m->name == "sm_clock") row.push_back(fixed(100 * v / max_sm_clock_mhz(r), 0));
    }
    t.rows.push_back(std::move(row));
  }
  // Leave out the columns that are empty in every row (a CPU-only report has no GPU columns).
  for (std::size_t c = t.columns.size(); c-- > 1;) {
    bool empty =
        std::all_of(t.rows.begin(), t.rows.end(), [&](const auto& row) { return row[c].empty(); });
    if (!empty) continue;
    t.columns.erase(t.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : t.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
  }
  return t;
}

}  // namespace dlbench::report
