#include "bench/report/framework_table.h"

#include <cmath>
#include <map>
#include <set>

#include "bench/report/names.h"
#include "bench/result/run_config.h"

namespace dlbench::report {
namespace {

using store::RunRecord;

// Also the workload as the table shows it: "ResNet-50 train FP16 (mixed) b128 224px"; a model
// that takes no size (NCF) shows none.
std::string workload_key(const RunRecord& r) {
  return model_label(r.model) + " " + r.mode + " " + precision_label(r.precision) + " b" +
         std::to_string(r.batch) + (r.input_size ? " " + r.input_size_text() : "") +
         (r.beam() > 1 ? " " + r.beam_text() : "");
}

std::string version(const RunRecord& r) {
  const nlohmann::json& doc = r.result;
  if (doc.contains("peer") && doc["peer"].contains("versions")) {
    const std::string framework = result::base_framework(r.framework);
    const nlohmann::json& v = doc["peer"]["versions"];
    if (v.contains(framework) && v[framework].is_string()) return v[framework];
  }
  if (r.framework == "native" && doc.contains("dlbench") && doc["dlbench"].is_object())
    return "dlbench " + doc["dlbench"].value("version", "");
  return "";
}

double telemetry_mean(const RunRecord& r, const std::string& name) {
  const store::TelemetryMetricRecord* t = r.find_telemetry(name);
  return t && t->mean ? *t->mean : NAN;
}

}  // namespace

bool spans_frameworks(const std::vector<RunRecord>& runs) {
  std::set<std::string> frameworks;
  for (const RunRecord& r : runs) frameworks.insert(r.framework);
  return frameworks.size() > 1;
}

Table framework_table(const std::vector<RunRecord>& runs) {
  Table t{
      "frameworks",
      "Frameworks side by side",
      "same model, batch, precision, synthetic data and device; ratio = samples/s over "
      "native's; GPU memory = NVML maximum of the device during the measured steps (all "
      "processes); allocator peak = what the framework itself reports (native: the most its own "
      "allocations held); SM active = mean "
      "over the measured steps (GPM); CPU = the run's process tree, % of a core",
      {"framework", "version", "workload", "samples/s", "vs native", "step p50 ms", "CV %",
       "GPU memory GiB", "allocator peak GiB", "SM active %", "CPU %", "run"},
      {}};
  std::map<std::string, double> native;
  for (const RunRecord& r : runs)
    if (r.status == "ok" && r.framework == "native") native[workload_key(r)] = r.throughput;
  for (const RunRecord& r : runs) {
    std::string id = r.id ? std::to_string(r.id) : "";
    if (r.status != "ok") {
      t.rows.push_back(
          {r.framework, "", workload_key(r), status_text(r), "", "", "", "", "", "", "", id});
      continue;
    }
    const nlohmann::json& st =
        r.result.contains("step_time_ms") ? r.result["step_time_ms"] : nlohmann::json::object();
    auto base = native.find(workload_key(r));
    std::string ratio =
        base != native.end() && base->second > 0 ? fixed(r.throughput / base->second, 2) + "x" : "";
    double allocator = allocator_peak_gib(r);
    t.rows.push_back({r.framework, version(r), workload_key(r), fixed(r.throughput, 2), ratio,
                      fixed(st.value("median", NAN), 1), fixed(100 * st.value("cv", NAN), 1),
                      fixed(gpu_telemetry(r, "memory_used", true) / kGiB, 2), fixed(allocator, 2),
                      fixed(gpu_telemetry(r, "sm_active", false), 1),
                      fixed(telemetry_mean(r, "process.cpu"), 0), id});
  }
  return t;
}

}  // namespace dlbench::report
