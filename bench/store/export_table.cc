#include "bench/store/export_table.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

#include "bench/store/export.h"
#include "engine/core/json_text.h"

namespace dlbench::store {
namespace {

using nlohmann::json;

std::string number_text(double v) {
  if (!std::isfinite(v)) return "";
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

int json_int(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_number_integer()
             ? object[key].get<int>()
             : 0;
}

// The CUDA indices a run's device names: "cuda:1" -> {1}; "2x cuda (threads)" -> {0, 1}
// (threads take the first N); an mpi job, rank 0's node: the first N it has.
std::vector<int> cuda_indices(const RunRecord& r, int replicas) {
  if (r.device.rfind("cuda:", 0) == 0) {
    try {
      return {std::stoi(r.device.substr(5))};
    } catch (const std::exception&) {
      return {0};
    }
  }
  std::vector<int> indices;
  if (r.device.find("cuda") != std::string::npos)
    for (int i = 0; i < replicas; ++i) indices.push_back(i);
  return indices;
}

std::string field_text(const json& environment, const char* section, const char* key) {
  if (!environment.contains(section) || !environment[section].is_object()) return "";
  const json& v = environment[section].value(key, json());
  return v.is_string() ? v.get<std::string>() : "";
}

std::string head_columns() {
  return "run_id,created,created_unix_s,status,machine,hostname,cpu_model,gpu_name,gpu_count,"
         "framework,model,mode,precision,precision_name,device,replicas,batch,input_size,suite";
}

std::string head_cells(const RunRecord& r) {
  const RunColumns c = run_columns(r);
  return std::to_string(r.id) + "," + c.created_iso + "," + std::to_string(r.created_unix_s) + "," +
         r.status + "," + r.machine.fingerprint.substr(0, 12) + "," +
         csv_field(r.machine.hostname) + "," + csv_field(c.cpu_model) + "," +
         csv_field(c.gpu_name) + "," + std::to_string(c.gpu_count) + "," + csv_field(r.framework) +
         "," + csv_field(r.model) + "," + r.mode + "," + r.precision + "," +
         csv_field(c.precision_name) + "," + csv_field(r.device) + "," +
         std::to_string(c.replicas) + "," + std::to_string(r.batch) + "," +
         std::to_string(r.input_size) + "," + csv_field(r.suite ? r.suite->name : "");
}

}  // namespace

const std::vector<std::string> kHeadlineMetrics = {"throughput/samples_per_s",
                                                   "step_time/median_ms",
                                                   "step_time/p95_ms",
                                                   "step_time/cv",
                                                   "compute/achieved_gflops",
                                                   "memory/planned_gib",
                                                   "memory/allocated_peak_gib",
                                                   "memory/peak_gib",
                                                   "memory/process_peak_rss_gib",
                                                   "loss/first",
                                                   "loss/last"};

std::string precision_name(const std::string& precision) {
  return precision == "fp32" ? "fp32 (strict)" : precision;
}

std::string iso_time(std::int64_t unix_s) {
  const std::time_t t = unix_s;
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

RunColumns run_columns(const RunRecord& r) {
  RunColumns c;
  c.created_iso = iso_time(r.created_unix_s);
  c.precision_name = precision_name(r.precision);
  const json& env = r.machine.environment;
  c.cpu_model = field_text(env, "host", "cpu_model");
  const json dp = r.result.is_object() ? r.result.value("data_parallel", json()) : json();
  c.replicas = std::max({1, json_int(r.config, "replicas"), json_int(dp, "replicas")});
  const std::vector<int> indices = cuda_indices(r, c.replicas);
  c.gpu_count = static_cast<int>(indices.size());
  std::set<std::string> seen;
  for (int index : indices) {
    std::string name = "GPU";
    if (env.contains("gpus") && env["gpus"].is_array())
      for (const json& g : env["gpus"])
        if (g.is_object() && json_int(g, "cuda_index") == index && g.contains("name") &&
            g["name"].is_string())
          name = g["name"].get<std::string>();
    if (seen.insert(name).second) c.gpu_name += (c.gpu_name.empty() ? "" : " + ") + name;
  }
  c.hardware = c.gpu_count > 0
                   ? std::to_string(c.gpu_count) + "x " + c.gpu_name
                   : (c.cpu_model.empty() ? std::string("CPU") : c.cpu_model) + " (CPU)";
  return c;
}

void export_csv(const std::vector<RunRecord>& runs, std::ostream& out) {
  out << head_columns() << ",tag,value,unit\n";
  for (const RunRecord& r : runs) {
    const std::string head = head_cells(r);
    if (r.metrics.empty()) out << head << ",,,\n";
    for (const MetricRecord& m : r.metrics)
      out << head << "," << csv_field(m.tag) << "," << number_text(m.value) << ","
          << csv_field(m.unit) << "\n";
  }
}

void export_csv_wide(const std::vector<RunRecord>& runs, std::ostream& out) {
  out << head_columns();
  for (const std::string& tag : kHeadlineMetrics) out << "," << csv_field(tag);
  out << "\n";
  for (const RunRecord& r : runs) {
    out << head_cells(r);
    for (const std::string& tag : kHeadlineMetrics) {
      const MetricRecord* m = r.find_metric(tag);
      out << "," << (m ? number_text(m->value) : std::string());
    }
    out << "\n";
  }
}

void export_benchmark_json(const std::vector<RunRecord>& runs, std::ostream& out) {
  json entries = json::array();
  std::set<std::string> names;
  for (const RunRecord& r : runs) {
    if (r.status != "ok" || !(r.throughput > 0)) continue;
    const RunColumns c = run_columns(r);
    std::string name =
        r.model + " " + r.mode + " " + c.precision_name + " b" + std::to_string(r.batch);
    if (r.input_size) name += " " + r.input_size_text();
    if (r.framework != "native") name += " " + r.framework;
    if (c.replicas > 1) name += " x" + std::to_string(c.replicas);
    name += " on " + c.hardware;
    if (!names.insert(name).second) continue;  // an older run of the same series
    std::string extra = "run " + std::to_string(r.id) + " at " + c.created_iso + " on " +
                        r.machine.hostname + " (machine " + r.machine.fingerprint.substr(0, 12) +
                        ")";
    if (r.result.is_object() && r.result.contains("dlbench"))
      extra += "\ndlbench " + field_text(r.result, "dlbench", "version") + " git " +
               field_text(r.result, "dlbench", "git_hash");
    char text[64];
    if (const MetricRecord* m = r.find_metric("step_time/median_ms")) {
      std::snprintf(text, sizeof text, "\nstep p50 %.4g ms", m->value);
      extra += text;
    }
    if (const MetricRecord* m = r.find_metric("step_time/cv")) {
      std::snprintf(text, sizeof text, ", CV %.1f %%", 100 * m->value);
      extra += text;
    }
    entries.push_back(
        {{"name", name}, {"unit", "samples/s"}, {"value", r.throughput}, {"extra", extra}});
  }
  out << dump_json(entries, 2) << "\n";
}

}  // namespace dlbench::store
