#include "bench/report/telemetry_charts.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bench/report/chart_spec.h"
#include "bench/report/scaling_table.h"
#include "bench/report/telemetry_view.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

// A timeline keeps at most this many points per run: enough for the eye, small in the file.
constexpr std::size_t kMaxTimelinePoints = 400;

// The largest mean (or maximum) over the run's GPUs, or the host metric's, in the shown unit.
double value(const RunRecord& r, const ShownMetric& m, bool use_max) {
  if (m.per_gpu) return shown_value(m, gpu_telemetry(r, m.name, use_max));
  const store::TelemetryMetricRecord* t = r.find_telemetry(m.name);
  const std::optional<double>* v = t ? (use_max ? &t->max : &t->mean) : nullptr;
  return v && *v ? shown_value(m, **v) : NAN;
}

const ShownMetric& find(const char* name) {
  for (const ShownMetric& m : shown_metrics())
    if (m.name == name) return m;
  return shown_metrics().front();
}

// One bar chart of several metrics (each a dataset), per run; metrics without data left out.
void metrics_chart(const ReportData& d, const std::string& title, const std::string& y_title,
                   const std::vector<std::pair<const char*, bool>>& metrics, json& charts) {
  std::vector<std::string> labels;
  for (const RunRecord& r : d.runs) labels.push_back(run_label(r));
  std::vector<BarSet> sets;
  for (const auto& [name, use_max] : metrics) {
    const ShownMetric& m = find(name);
    BarSet s{m.title + (use_max ? ", max" : ", mean"), {}};
    for (const RunRecord& r : d.runs) s.values.push_back(value(r, m, use_max));
    if (any_finite({s})) sets.push_back(std::move(s));
  }
  if (!any_finite(sets)) return;
  charts.push_back(bar_chart("Telemetry", title, y_title, labels, sets));
  charts.back()["tall"] = true;  // one bar group per run: long labels
}

// A bar chart of metrics with a dashed line at each run's ceiling (the power limit, the
// maximum SM clock), where the machine's environment has one.
void chart_with_ceiling(const ReportData& d, const std::string& title, const std::string& y_title,
                        const std::vector<std::pair<const char*, bool>>& metrics,
                        const std::string& ceiling, double (*ceiling_of)(const RunRecord&),
                        json& charts) {
  const size_t before = charts.size();
  metrics_chart(d, title, y_title, metrics, charts);
  if (charts.size() == before) return;
  json line = json::array();
  bool any = false;
  for (const RunRecord& r : d.runs) {
    double v = ceiling_of(r);
    any = any || std::isfinite(v);
    line.push_back(chart_number(v));
  }
  if (any)
    charts.back()["datasets"].push_back(
        {{"label", ceiling}, {"data", line}, {"type", "line"}, {"dashed", true}});
}

// Timelines: for each shown metric, every run's samples (thinned), per GPU.
void timelines(const ReportData& d, json& charts) {
  for (const ShownMetric& m : shown_metrics()) {
    json datasets = json::array();
    double last_x = 0, limit = NAN;
    for (const RunRecord& r : d.runs)
      for (const store::TelemetrySeries& s : r.samples) {
        const ShownMetric* shown = shown_metric(s.name);
        if (shown != &m || s.values.empty()) continue;
        std::size_t step = std::max<std::size_t>(1, s.values.size() / kMaxTimelinePoints);
        json points = json::array();
        for (std::size_t i = 0; i < s.values.size(); i += step)
          if (std::isfinite(s.values[i]))
            points.push_back({{"x", s.t_s[i]}, {"y", shown_value(m, s.values[i])}});
        last_x = std::max(last_x, s.t_s.back());
        std::string label = run_label(r);
        if (m.per_gpu && run_replicas(r) > 1) label += " GPU " + std::to_string(gpu_index(s.name));
        datasets.push_back({{"label", label}, {"data", points}});
        if (m.name == "power") limit = std::fmax(limit, power_limit_w(r));
      }
    if (datasets.empty()) continue;
    if (std::isfinite(limit))
      datasets.push_back(
          {{"label", "power limit " + fixed(limit, 0) + " W"},
           {"data", json::array({{{"x", 0}, {"y", limit}}, {{"x", last_x}, {"y", limit}}})},
           {"dashed", true}});
    charts.push_back({{"section", "Telemetry over the measured phase"},
                      {"title", capitalized(m.title) + " (" + m.unit + ")"},
                      {"type", "line"},
                      {"unit", m.title + " (" + m.unit + ")"},
                      {"xUnit", "s"},
                      {"datasets", datasets}});
  }
}

}  // namespace

void telemetry_charts(const ReportData& d, json& charts) {
  metrics_chart(d, "GPU activity per run (% of the measured phase)", "activity (%)",
                {{"sm_active", false},
                 {"tensor_active", false},
                 {"dram_active", false},
                 {"kernel_busy", false},
                 {"memory_busy", false}},
                charts);
  chart_with_ceiling(d, "Clocks per run (MHz), against the maximum SM clock", "clock (MHz)",
                     {{"sm_clock", false}, {"memory_clock", false}}, "maximum SM clock (NVML)",
                     max_sm_clock_mhz, charts);
  chart_with_ceiling(d, "Board power per run (W), against the power limit", "power (W)",
                     {{"power", false}, {"power", true}}, "power limit", power_limit_w, charts);
  metrics_chart(d,
                "GPU temperature per run (\xC2\xB0"
                "C)",
                "temperature (\xC2\xB0"
                "C)",
                {{"temperature", false}, {"temperature", true}}, charts);
  metrics_chart(d, "Process CPU per run (% of one core)", "CPU (% of one core)",
                {{"process.cpu", false}, {"process.cpu", true}}, charts);
  // (GPU memory is on the peak-memory chart.)
  metrics_chart(d, "Process and host memory per run (GiB)", "memory (GiB)",
                {{"process.rss", true}, {"system.memory_used", true}}, charts);
  timelines(d, charts);
}

}  // namespace dlbench::report
