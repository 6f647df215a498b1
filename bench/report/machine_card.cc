#include "bench/report/machine_card.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "bench/report/html_text.h"
#include "bench/report/names.h"
#include "bench/report/scaling_table.h"

namespace dlbench::report {
namespace {

using nlohmann::json;
using store::RunRecord;

// The model whose numbers lead: ResNet-50 (the published reviews' headline), else the first.
constexpr const char* kFlagshipModel = "resnet50";
// At most this many headline rows (mode x batch x input) per machine.
constexpr std::size_t kHeadlineRows = 4;

std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return fixed(v.get<double>(), 1);
  return "";
}

std::string field(const json& env, const char* section, const char* key) {
  if (!env.is_object() || !env.contains(section) || !env[section].is_object()) return "";
  return text(env[section].value(key, json()));
}

std::string gib(double bytes) {
  return fixed(bytes / kGiB, 1) + " GiB";
}

// Label / value pairs describing a machine; a fact it does not have is left out.
std::vector<std::pair<std::string, std::string>> facts(const store::MachineRecord& m) {
  const json& env = m.environment;
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) out.emplace_back(label, value);
  };
  const json gpus = env.is_object() && env.contains("gpus") && env["gpus"].is_array()
                        ? env["gpus"]
                        : json::array();
  if (!gpus.empty()) {
    const json& g = gpus[0];
    // "2x A" or "1x A + 1x B" (machine_name's GPU part); sizes only where every GPU is alike.
    const std::string name = machine_name(m);
    std::string gpu = name.substr(0, name.find(" \xC2\xB7 "));
    const bool alike = std::all_of(gpus.begin(), gpus.end(), [&](const json& each) {
      return each.is_object() &&
             each.value("name", std::string()) == g.value("name", std::string());
    });
    if (alike && g.value("memory_bytes", json()).is_number())
      gpu += ", " + gib(g["memory_bytes"].get<double>()) + " each";
    if (alike && g.value("sm_count", json()).is_number())
      gpu += ", " + text(g["sm_count"]) + " SMs";
    add("GPUs", gpu);
    if (alike && g.value("memory_bandwidth_gb_per_s", json()).is_number())
      add("GPU memory bandwidth",
          fixed(g["memory_bandwidth_gb_per_s"].get<double>(), 0) + " GB/s (theoretical)");
    std::set<std::string> limits;
    for (const json& each : gpus)
      if (each.value("power_limit_w", json()).is_number())
        limits.insert(fixed(each["power_limit_w"].get<double>(), 0) + " W");
    std::string limit;
    for (const std::string& l : limits) limit += (limit.empty() ? "" : ", ") + l;
    add("Power limit", limit);
    std::string sw;
    auto part = [&](const char* name, const std::string& v) {
      if (!v.empty()) sw += (sw.empty() ? "" : " \xC2\xB7 ") + std::string(name) + " " + v;
    };
    part("driver", field(env, "gpu_software", "driver_version"));
    part("CUDA", field(env, "gpu_software", "cuda_runtime"));
    part("cuDNN", field(env, "gpu_software", "cudnn"));
    part("NCCL", field(env, "gpu_software", "nccl"));
    add("GPU software", sw);
    add("Interconnect", field(env, "interconnect", "summary"));
  } else {
    add("GPUs", "none");
  }
  std::string cpu = field(env, "host", "cpu_model");
  std::string cores = field(env, "host", "cores"), threads = field(env, "host", "threads");
  if (!cores.empty()) cpu += ", " + cores + " cores";
  if (!threads.empty()) cpu += ", " + threads + " threads";
  add("CPU", cpu);
  if (env.is_object() && env.contains("host") &&
      env["host"].value("memory_bytes", json()).is_number())
    add("Memory", gib(env["host"]["memory_bytes"].get<double>()));
  std::string os = field(env, "host", "os"), kernel = field(env, "host", "kernel");
  add("OS", os + (kernel.empty() ? "" : ", kernel " + kernel));
  std::string build = field(env, "dlbench", "version"), hash = field(env, "dlbench", "git_hash");
  // 12 digits of the commit, and "-dirty" for a build of a modified tree, which a reader must
  // see (cutting the stored text to 12 characters dropped it).
  const bool dirty = hash.ends_with("-dirty");
  if (dirty) hash.resize(hash.size() - 6);
  if (!hash.empty()) build += " (" + hash.substr(0, 12) + (dirty ? "-dirty" : "") + ")";
  add("dlbench", build);
  return out;
}

// The precisions a card lists: every one `micro gemm` measures on a GPU; a CPU's oneDNN ones.
const std::vector<std::string> kGpuPrecisions = {"fp64", "fp32", "tf32", "fp16",
                                                 "bf16", "fp8",  "int8"};
const std::vector<std::string> kCpuPrecisions = {"fp32", "bf16"};

// A measured rate with three significant digits at least: a CPU's 0.0123 TFLOP/s stays readable.
std::string rate_text(double v) {
  if (v >= 10) return fixed(v, 1);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

std::string measured_note(const store::MeasuredPeak& p) {
  return "micro " + std::string(p.unit == "GB/s" ? "bandwidth" : "gemm") + " run " +
         std::to_string(p.run_id);
}

// The measured compute and bandwidth among the facts: compute after the processors, the
// bandwidth next to the theoretical figure where the GPU has one.
void add_measured(const MachineMeasured& mm,
                  std::vector<std::pair<std::string, std::string>>& out) {
  std::string compute;
  bool any = false;
  for (const std::string& p : mm.precisions) {
    auto it = mm.compute.find(p);
    any = any || it != mm.compute.end();
    compute += (compute.empty() ? "" : " \xC2\xB7 ") + p + " " +
               (it == mm.compute.end() ? std::string("not measured")
                                       : rate_text(it->second.value) + " " + it->second.unit +
                                             " (" + measured_note(it->second) + ")");
  }
  if (!any) compute = "not measured (run `dlbench micro gemm --device " + mm.device + "`)";
  auto at = std::find_if(out.begin(), out.end(), [](const auto& f) { return f.first == "CPU"; });
  out.insert(at, {"Compute (measured, " + mm.device + ")", compute});
  auto theoretical = std::find_if(out.begin(), out.end(),
                                  [](const auto& f) { return f.first == "GPU memory bandwidth"; });
  if (!mm.bandwidth) {
    if (theoretical != out.end()) theoretical->second += ", measured: not measured";
    return;
  }
  const store::MeasuredPeak& b = *mm.bandwidth;
  std::string measured =
      fixed(b.value, 0) + " GB/s measured (" + b.precision + ", " + measured_note(b) + ")";
  if (theoretical != out.end())
    theoretical->second = measured + " of " + theoretical->second;
  else
    out.insert(std::find_if(out.begin(), out.end(), [](const auto& f) { return f.first == "OS"; }),
               {"Memory bandwidth", measured});
}

// The machine's flagship numbers: one row per mode, batch and input of the flagship model (its
// native, single-replica ok runs; the newest of each), one column per precision.
void write_headline(const ReportData& d, const store::MachineRecord& m, std::ostream& out) {
  std::vector<const RunRecord*> runs;
  for (const RunRecord& r : d.runs)
    if (r.machine.id == m.id && r.status == "ok" && r.framework == "native" && run_replicas(r) == 1)
      runs.push_back(&r);
  if (runs.empty()) return;
  const RunRecord* flagship = runs.front();
  for (const RunRecord* r : runs)
    if (r->model == kFlagshipModel) flagship = r;
  const std::string model = flagship->model;
  std::vector<std::string> rows, precisions;
  std::map<std::string, std::map<std::string, double>> value;
  std::map<std::string, std::map<std::string, std::string>> noise;  // the warnings' text
  for (const RunRecord* r : runs) {
    if (r->model != model) continue;
    std::string row = mode_label(r->mode) + ", batch " + std::to_string(r->batch) +
                      (r->input_size ? ", " + r->input_size_text() : "");
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    if (std::find(precisions.begin(), precisions.end(), r->precision) == precisions.end())
      precisions.push_back(r->precision);
    value[row][r->precision] = r->throughput;
    std::string text;
    for (const result::NoiseWarning& w : run_warnings(*r))
      text += (text.empty() ? "" : "; ") + w.text;
    noise[row][r->precision] = text;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const std::string& a, const std::string& b) {
    return a.rfind("training", 0) == 0 && b.rfind("training", 0) != 0;
  });
  if (rows.size() > kHeadlineRows) rows.resize(kHeadlineRows);
  std::stable_sort(precisions.begin(), precisions.end(), [](const auto& a, const auto& b) {
    return precision_rank(a) < precision_rank(b);
  });
  out << "<div class=\"headline\"><h3>" << escape_html(model_label(model)) << ", "
      << escape_html(throughput_unit(*flagship))
      << " (higher is better)</h3>\n<table><thead><tr><th></th>";
  for (const std::string& p : precisions)
    out << "<th class=\"num\">" << escape_html(precision_label(p)) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (const std::string& row : rows) {
    out << "<tr><th>" << escape_html(row) << "</th>";
    for (const std::string& p : precisions) {
      auto it = value[row].find(p);
      out << "<td class=\"num big\">"
          << (it == value[row].end() ? std::string("&ndash;")
                                     : fixed(it->second, it->second < 100 ? 1 : 0));
      // A noisy figure says so where it leads, as in the runs table.
      if (it != value[row].end() && !noise[row][p].empty())
        out << " <span class=\"warn\" title=\"" << escape_html(noise[row][p])
            << "\">&#9888;</span>";
      out << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

}  // namespace

std::string machine_title(const ReportData& d) {
  const std::map<std::int64_t, std::string> names = machine_names(d.machines);
  if (d.machines.empty()) return "dlbench report";
  if (d.machines.size() == 1) return names.at(d.machines[0].id);
  // One hardware, several software setups: the hardware once, then what differs.
  std::set<std::string> bases;
  for (const store::MachineRecord& m : d.machines) bases.insert(machine_name(m));
  if (bases.size() == 1) {
    const std::map<std::int64_t, std::string> shorts = machine_short_names(d.machines);
    std::string title = *bases.begin() + ": ";
    for (std::size_t i = 0; i < d.machines.size(); ++i)
      title += (i ? " vs " : "") + shorts.at(d.machines[i].id);
    return title;
  }
  if (d.machines.size() == 2)
    return names.at(d.machines[0].id) + " vs " + names.at(d.machines[1].id);
  return std::to_string(d.machines.size()) + " machines";
}

MachineMeasured measured_on(store::Store& store, const store::MachineRecord& m) {
  MachineMeasured mm;
  const json& env = m.environment;
  const bool gpu =
      env.is_object() && env.contains("gpus") && env["gpus"].is_array() && !env["gpus"].empty();
  mm.device = gpu ? "cuda:0" : "cpu";
  mm.precisions = gpu ? kGpuPrecisions : kCpuPrecisions;
  for (const std::string& p : mm.precisions)
    if (auto peak = store::newest_measured_peak(store, m.fingerprint, mm.device, p))
      mm.compute.emplace(p, *peak);
  mm.bandwidth = store::newest_measured_bandwidth(store, m.fingerprint, mm.device);
  return mm;
}

// The headline ratio against the --relative-to reference: its geometric mean over the
// workloads both have, and the range, under the machine's own headline (one machine only: the
// ratios pool every run of the report).
void write_relative_headline(const ReportData& d, std::ostream& out) {
  if (!d.relative || d.relative->rows.empty() || !std::isfinite(d.relative->geometric_mean)) return;
  const RelativePerformance& rel = *d.relative;
  const auto [low, high] = std::minmax_element(
      rel.rows.begin(), rel.rows.end(),
      [](const RelativeRow& a, const RelativeRow& b) { return a.ratio < b.ratio; });
  char text[96];
  std::snprintf(text, sizeof text, "%.2fx (geometric mean of %zu workloads; %.2fx to %.2fx)",
                rel.geometric_mean, rel.rows.size(), low->ratio, high->ratio);
  out << "<p class=\"relative-headline\"><strong>Relative to " << escape_html(rel.reference)
      << "</strong> (" << escape_html(rel.reference_machine) << "): " << text << "</p>\n";
}

void write_machine_cards(const ReportData& d, std::ostream& out) {
  const std::map<std::int64_t, std::string> names = machine_names(d.machines);
  for (const store::MachineRecord& m : d.machines) {
    out << "<section class=\"machine card\">\n";
    if (d.machines.size() > 1) out << "<h2>" << escape_html(names.at(m.id)) << "</h2>\n";
    out << "<div class=\"machine-body\"><dl class=\"facts\">\n";
    std::vector<std::pair<std::string, std::string>> card = facts(m);
    if (auto it = d.measured.find(m.id); it != d.measured.end()) add_measured(it->second, card);
    for (const auto& [label, value] : card)
      out << "<dt>" << escape_html(label) << "</dt><dd>" << escape_html(value) << "</dd>\n";
    out << "</dl>\n";
    write_headline(d, m, out);
    out << "</div>\n";
    if (d.machines.size() == 1) write_relative_headline(d, out);
    out << "</section>\n";
  }
}

}  // namespace dlbench::report
