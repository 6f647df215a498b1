#include "bench/report/charts.h"

#include "bench/report/chart_spec.h"
#include "bench/report/framework_table.h"
#include "bench/report/max_batch_view.h"
#include "bench/report/names.h"
#include "bench/report/relative_view.h"
#include "bench/report/scaling_table.h"
#include "bench/report/telemetry_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

// The machines' short names, for chart categories when a report spans several machines.
class MachineSuffix {
 public:
  explicit MachineSuffix(const ReportData& d)
      : names_(machine_short_names(d.machines)), several_(d.machines.size() > 1) {}
  std::string operator()(const RunRecord& r) const {
    if (!several_) return "";
    auto it = names_.find(r.machine.id);
    return " \xC2\xB7 " + (it != names_.end() ? it->second : machine_name(r.machine));
  }

 private:
  std::map<std::int64_t, std::string> names_;
  bool several_;
};

// "ResNet-50 b128 224px": what a run computed, without its mode and precision. Data-parallel
// runs name their replica count: "b128 224px x4" is 4 replicas of batch 128 (and "mpi" when
// each replica was its own process).
std::string shape(const RunRecord& r) {
  std::string w = model_label(r.model) + " b" + std::to_string(r.batch);
  if (r.input_size) w += " " + r.input_size_text();
  if (r.beam() > 1) w += " " + r.beam_text();
  if (int n = run_replicas(r); n > 1) w += " x" + std::to_string(n);
  if (run_launch(r) == "mpi") w += " mpi";
  return w;
}

// Modes in the order a reader expects them: training, inference, then any other.
std::vector<std::string> modes_of(const std::vector<RunRecord>& runs) {
  std::vector<std::string> modes;
  for (const RunRecord& r : runs)
    if (std::find(modes.begin(), modes.end(), r.mode) == modes.end()) modes.push_back(r.mode);
  auto rank = [](const std::string& m) { return m == "train" ? 0 : m == "infer" ? 1 : 2; };
  std::stable_sort(modes.begin(), modes.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return modes;
}

// Categories x datasets, filled in run order; datasets sorted by precision (fp32, tf32, fp16,
// bf16). The newest run of a configuration wins.
class Grid {
 public:
  void set(const std::string& label, const std::string& set, int rank, double value,
           const std::string& color = "") {
    if (std::find(labels_.begin(), labels_.end(), label) == labels_.end()) labels_.push_back(label);
    if (!values_.count(set)) order_.push_back({rank, set});
    values_[set][label] = value;
    if (!color.empty()) colors_[set] = color;
  }
  const std::vector<std::string>& labels() const { return labels_; }
  std::vector<BarSet> sets() const {
    std::vector<std::pair<int, std::string>> order = order_;
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<BarSet> out;
    for (const auto& [rank, set] : order) {
      BarSet b{set, {}, colors_.count(set) ? colors_.at(set) : ""};
      const auto& v = values_.at(set);
      for (const std::string& l : labels_) b.values.push_back(v.count(l) ? v.at(l) : NAN);
      out.push_back(std::move(b));
    }
    return out;
  }

 private:
  std::vector<std::string> labels_;
  std::vector<std::pair<int, std::string>> order_;
  std::map<std::string, std::map<std::string, double>> values_;
  std::map<std::string, std::string> colors_;
};

// Training and inference on charts of their own: their throughputs differ by 10-40x.
void throughput_charts(const ReportData& d, const MachineSuffix& suffix, json& charts) {
  for (const std::string& mode : modes_of(d.runs)) {
    Grid grid;
    std::set<std::string> units;
    for (const RunRecord& r : d.runs) {
      if (r.status != "ok" || r.mode != mode) continue;
      // Machines in the categories, precisions in the datasets: each precision keeps its colour.
      grid.set(shape(r) + suffix(r),
               precision_label(r.precision) + (r.framework == "native" ? "" : " " + r.framework),
               precision_rank(r.precision), r.throughput,
               r.framework == "native" ? precision_color(r.precision) : "");
      units.insert(throughput_unit(r));
    }
    const std::string unit = units.size() == 1 ? *units.begin() : "samples/s";
    if (any_finite(grid.sets()))
      charts.push_back(
          bar_chart("Throughput",
                    capitalized(mode_label(mode)) + " throughput (" + unit + ", higher is better)",
                    "throughput (" + unit + ")", grid.labels(), grid.sets()));
  }
}

// Speedups against strict FP32 and against TF32 (what Ampere and Hopper run by default), each
// over the same machine, framework, model, mode, batch, input and replicas.
void speedup_charts(const ReportData& d, const MachineSuffix& suffix, json& charts) {
  auto group = [](const RunRecord& r) {
    return std::to_string(r.machine.id) + "|" + r.framework + "|" + r.mode + "|" + shape(r);
  };
  for (const char* base : {"fp32", "tf32"}) {
    std::map<std::string, double> base_rate;
    for (const RunRecord& r : d.runs)
      if (r.status == "ok" && r.precision == base) base_rate[group(r)] = r.throughput;
    Grid grid;
    for (const RunRecord& r : d.runs) {
      auto it = base_rate.find(group(r));
      if (r.status != "ok" || it == base_rate.end() || it->second <= 0) continue;
      if (precision_rank(r.precision) <= precision_rank(base)) continue;
      grid.set(capitalized(mode_label(r.mode)) + ": " + shape(r) + suffix(r),
               precision_label(r.precision), precision_rank(r.precision), r.throughput / it->second,
               precision_color(r.precision));
    }
    const std::string name = precision_label(base);
    if (any_finite(grid.sets()))
      charts.push_back(
          bar_chart("Precision speedups", "Speedup over " + name + " (same model, mode and batch)",
                    "speedup (x " + name + " throughput)", grid.labels(), grid.sets(), "x"));
  }
}

// The framework comparison as grouped bars: one group per workload, one bar per framework.
void framework_chart(const ReportData& d, const MachineSuffix& suffix, json& charts) {
  if (!spans_frameworks(d.runs)) return;
  Grid grid;
  int order = 0;
  std::map<std::string, int> rank;
  for (const RunRecord& r : d.runs) {
    if (r.status != "ok") continue;
    if (!rank.count(r.framework)) rank[r.framework] = order++;
    grid.set(mode_label(r.mode) + ": " + shape(r) + " " + precision_label(r.precision) + suffix(r),
             r.framework, rank[r.framework], r.throughput);
  }
  if (any_finite(grid.sets()))
    charts.push_back(bar_chart("Frameworks", "Throughput per framework (same workload and device)",
                               "throughput (samples/s)", grid.labels(), grid.sets()));
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
  std::vector<BarSet> mem = {{"planned (planner peak)", planned},
                             {"activations", activations},
                             {"allocator peak", allocated},
                             {"process peak RSS", rss},
                             {"GPU memory max", gpu}};
  mem.erase(std::remove_if(mem.begin(), mem.end(), [](const auto& s) { return !any_finite({s}); }),
            mem.end());
  if (any_finite(mem)) {
    charts.push_back(bar_chart("Memory", "Peak memory per run", "memory (GiB)", labels, mem));
    charts.back()["tall"] = true;
  }
  if (any_finite({{"J/sample", energy}})) {
    charts.push_back(bar_chart("Energy", "GPU energy per sample (lower is better)",
                               "energy per sample (J)", labels, {{"J/sample", energy}}));
    charts.back()["tall"] = true;
  }
}

json xy(double x, double y) {
  return {{"x", x}, {"y", chart_number(y)}};
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
          {"unit", "throughput (samples/s)"},
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
  const MachineSuffix suffix(d);
  throughput_charts(d, suffix, charts);
  framework_chart(d, suffix, charts);
  max_batch_charts(d, charts);
  speedup_charts(d, suffix, charts);
  memory_and_energy_charts(d, charts);
  telemetry_charts(d, charts);
  if (d.relative && !d.relative->rows.empty()) charts.push_back(relative_chart(*d.relative));
  return charts;
}

}  // namespace dlbench::report
