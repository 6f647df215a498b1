#include "bench/report/charts.h"

#include "bench/report/framework_table.h"
#include "bench/report/scaling_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

// A timeline keeps at most this many points per run: enough for the eye, small in the file.
constexpr std::size_t kMaxTimelinePoints = 400;

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

bool is_bytes(const std::string& unit) {
  return unit == "B" || unit == "bytes";
}

std::string machine_suffix(const ReportData& d, const RunRecord& r) {
  return d.machines.size() > 1
             ? " · " +
                   (r.machine.hostname.empty() ? "machine " + std::to_string(r.machine.id)
                                               : r.machine.hostname) +
                   " #" + std::to_string(r.machine.id)
             : "";
}

// Data-parallel runs name their replica count: "b128 224px x4" is 4 replicas of batch 128
// (and "mpi" when each replica was its own process).
std::string workload(const RunRecord& r) {
  std::string w = r.model + " " + r.mode + " b" + std::to_string(r.batch);
  if (r.input_size) {
    w += ' ';
    w += std::to_string(r.input_size);
    w += "px";
  }
  if (int n = run_replicas(r); n > 1) {
    w += " x";
    w += std::to_string(n);
  }
  if (run_launch(r) == "mpi") w += " mpi";
  return w;
}

json bar(const std::string& section, const std::string& title, const std::string& unit,
         const std::vector<std::string>& labels,
         const std::vector<std::pair<std::string, std::vector<double>>>& sets) {
  json datasets = json::array();
  for (const auto& [label, values] : sets) {
    json data = json::array();
    for (double v : values) data.push_back(number(v));
    datasets.push_back({{"label", label}, {"data", data}});
  }
  return {{"section", section}, {"title", title},   {"type", "bar"},
          {"unit", unit},       {"labels", labels}, {"datasets", datasets}};
}

bool any_finite(const std::vector<std::pair<std::string, std::vector<double>>>& sets) {
  for (const auto& s : sets)
    for (double v : s.second)
      if (std::isfinite(v)) return true;
  return false;
}

void throughput_chart(const ReportData& d, json& charts) {
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, double>> by_set;  // set -> label -> value
  std::vector<std::string> set_order;
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok") continue;
    std::string label = workload(r);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    std::string set =
        r.precision + (r.framework == "native" ? "" : " " + r.framework) + machine_suffix(d, r);
    if (!by_set.count(set)) set_order.push_back(set);
    by_set[set][label] = r.throughput;  // the newest run of a configuration wins
  }
  std::vector<std::pair<std::string, std::vector<double>>> sets;
  for (const std::string& s : set_order) {
    std::vector<double> values;
    for (const std::string& l : labels) values.push_back(by_set[s].count(l) ? by_set[s][l] : NAN);
    sets.emplace_back(s, values);
  }
  if (any_finite(sets))
    charts.push_back(
        bar("Throughput", "Throughput per model, mode and precision", "samples/s", labels, sets));
}

void speedup_chart(const ReportData& d, json& charts) {
  std::map<std::string, double> fp32;
  auto group = [](const RunRecord& r) {
    return std::to_string(r.machine.id) + "|" + r.framework + "|" + workload(r);
  };
  for (const RunRecord& r : d.runs)
    if (r.status == "ok" && r.precision == "fp32") fp32[group(r)] = r.throughput;
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, double>> by_precision;
  for (const RunRecord& r : d.runs) {
    auto it = fp32.find(group(r));
    if (r.status != "ok" || r.precision == "fp32" || it == fp32.end() || it->second <= 0) continue;
    std::string label = workload(r) + machine_suffix(d, r);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    by_precision[r.precision][label] = r.throughput / it->second;
  }
  std::vector<std::pair<std::string, std::vector<double>>> sets;
  for (auto& [p, values] : by_precision) {
    std::vector<double> v;
    for (const std::string& l : labels) v.push_back(values.count(l) ? values[l] : NAN);
    sets.emplace_back(p + " / fp32", v);
  }
  if (any_finite(sets))
    charts.push_back(bar("Mixed precision", "Speedup over fp32 (same model, mode and batch)",
                         "x fp32", labels, sets));
}

// The framework comparison as grouped bars: one group per workload, one bar per framework.
void framework_chart(const ReportData& d, json& charts) {
  if (!spans_frameworks(d.runs)) return;
  std::vector<std::string> labels, frameworks;
  std::map<std::string, std::map<std::string, double>> by_framework;
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok") continue;
    std::string label = workload(r) + " " + r.precision + machine_suffix(d, r);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    if (!by_framework.count(r.framework)) frameworks.push_back(r.framework);
    by_framework[r.framework][label] = r.throughput;  // the newest run wins
  }
  std::vector<std::pair<std::string, std::vector<double>>> sets;
  for (const std::string& f : frameworks) {
    std::vector<double> values;
    for (const std::string& l : labels)
      values.push_back(by_framework[f].count(l) ? by_framework[f][l] : NAN);
    sets.emplace_back(f, values);
  }
  if (any_finite(sets))
    charts.push_back(bar("Frameworks", "Throughput per framework (same workload and device)",
                         "samples/s", labels, sets));
}

void telemetry_charts(const ReportData& d, json& charts) {
  // Metric names in first-seen order, their label and unit.
  std::vector<std::string> names;
  std::map<std::string, std::pair<std::string, std::string>> info;
  for (const RunRecord& r : d.runs)
    for (const store::TelemetryMetricRecord& t : r.telemetry)
      if (is_reported_telemetry(t.name) && t.mean && !info.count(t.name)) {
        names.push_back(t.name);
        info[t.name] = {t.label, t.unit};
      }
  std::vector<std::string> run_labels;
  for (const RunRecord& r : d.runs) run_labels.push_back(run_label(r));
  for (const std::string& name : names) {
    const auto& [label, unit] = info[name];
    double scale = is_bytes(unit) ? 1 / kGiB : 1;
    std::string shown = is_bytes(unit) ? "GiB" : unit;
    std::vector<double> mean, max;
    for (const RunRecord& r : d.runs) {
      const store::TelemetryMetricRecord* t = r.find_telemetry(name);
      mean.push_back(t && t->mean ? *t->mean * scale : NAN);
      max.push_back(t && t->max ? *t->max * scale : NAN);
    }
    charts.push_back(bar("Telemetry", name + ": " + label + " (measured phase)", shown, run_labels,
                         {{"mean", mean}, {"max", max}}));

    json datasets = json::array();
    for (const RunRecord& r : d.runs)
      for (const store::TelemetrySeries& s : r.samples) {
        if (s.name != name) continue;
        std::size_t step = std::max<std::size_t>(1, s.values.size() / kMaxTimelinePoints);
        json points = json::array();
        for (std::size_t i = 0; i < s.values.size(); i += step)
          if (std::isfinite(s.values[i]))
            points.push_back({{"x", s.t_s[i]}, {"y", s.values[i] * scale}});
        datasets.push_back({{"label", run_label(r)}, {"data", points}});
      }
    if (!datasets.empty())
      charts.push_back({{"section", "Telemetry timelines"},
                        {"title", name + ": " + label + " over the measured phase"},
                        {"type", "line"},
                        {"unit", shown},
                        {"xUnit", "s"},
                        {"datasets", datasets}});
  }
}

void memory_and_energy_charts(const ReportData& d, json& charts) {
  std::vector<std::string> labels;
  std::vector<double> planned, activations, allocated, rss, gpu, energy;
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok") continue;
    labels.push_back(run_label(r));
    planned.push_back(metric(r, "memory/planned_gib"));
    activations.push_back(metric(r, "memory/activations_gib"));
    allocated.push_back(allocator_peak_gib(r));
    rss.push_back(metric(r, "memory/process_peak_rss_gib"));
    gpu.push_back(gpu_telemetry(r, "memory_used", true) / kGiB);
    energy.push_back(energy_per_sample(r));
  }
  std::vector<std::pair<std::string, std::vector<double>>> mem = {
      {"planned (planner peak)", planned},
      {"activations", activations},
      {"allocator peak", allocated},
      {"process peak RSS", rss},
      {"GPU memory max", gpu}};
  mem.erase(std::remove_if(mem.begin(), mem.end(), [](const auto& s) { return !any_finite({s}); }),
            mem.end());
  if (any_finite(mem)) charts.push_back(bar("Memory", "Peak memory per run", "GiB", labels, mem));
  if (any_finite({{"J/sample", energy}}))
    charts.push_back(
        bar("Energy", "GPU energy per sample", "J/sample", labels, {{"J/sample", energy}}));
}

json xy(double x, double y) {
  return {{"x", x}, {"y", number(y)}};
}

// Samples/s and efficiency per replica count on one chart (efficiency on a second axis), with
// the ideal line: the base's samples/s per replica times the count. Single-process runs (one
// GPU, a thread per GPU) and MPI runs are separate datasets against the same base.
json scaling_chart(const ScalingGroup& g, const std::string& target) {
  json rate[2] = {json::array(), json::array()}, efficiency[2] = {json::array(), json::array()};
  json ideal = json::array();
  int last = 0;
  for (const ScalingRow& row : g.rows) {
    const int mpi = row.launch == "mpi";
    rate[mpi].push_back(xy(row.replicas, row.throughput));
    efficiency[mpi].push_back(xy(row.replicas, 100 * row.efficiency));
    if (row.replicas != last)
      ideal.push_back(xy(row.replicas, g.base_throughput / g.base_replicas * row.replicas));
    last = row.replicas;
  }
  const char* names[2] = {"one process", "mpi"};
  json datasets = json::array();
  for (int mpi : {0, 1})
    if (!rate[mpi].empty())
      datasets.push_back({{"label", std::string("samples/s, ") + names[mpi]},
                          {"data", rate[mpi]},
                          {"points", true}});
  datasets.push_back({{"label", "ideal (linear from " + std::to_string(g.base_replicas) + ")"},
                      {"data", ideal},
                      {"dashed", true}});
  for (int mpi : {0, 1})
    if (!efficiency[mpi].empty())
      datasets.push_back({{"label", std::string("efficiency %, ") + names[mpi]},
                          {"data", efficiency[mpi]},
                          {"points", true},
                          {"axis", "y2"}});
  return {{"section", "Multi-GPU scaling"},
          {"target", target},
          {"title", g.workload + " on " + g.device + ", " + g.machine},
          {"type", "line"},
          {"unit", "samples/s"},
          {"xTitle", "replicas (GPUs, or MPI ranks)"},
          {"xInteger", true},
          {"y2Unit", "scaling efficiency %"},
          {"datasets", datasets}};
}

}  // namespace

std::string scaling_chart_target(std::size_t group_index) {
  return "scaling-chart-" + std::to_string(group_index);
}

json report_charts(const ReportData& d) {
  json charts = json::array();
  std::vector<ScalingGroup> groups = scaling_groups(d.runs);
  for (std::size_t i = 0; i < groups.size(); ++i)
    charts.push_back(scaling_chart(groups[i], scaling_chart_target(i)));
  throughput_chart(d, charts);
  framework_chart(d, charts);
  speedup_chart(d, charts);
  memory_and_energy_charts(d, charts);
  telemetry_charts(d, charts);
  return charts;
}

}  // namespace dlbench::report
