#include "bench/store/measured_peak.h"

#include <vector>

#include "engine/core/error.h"

namespace dlbench::store {

std::string micro_workload(const std::string& benchmark) {
  return "micro " + benchmark;
}

std::string gemm_best_tag(const std::string& precision) {
  return "gemm/" + precision + "/best";
}

std::optional<MeasuredPeak> newest_measured_peak(Store& store, const std::string& machine,
                                                 const std::string& device,
                                                 const std::string& precision) {
  RunFilter filter;
  filter.model = micro_workload("gemm");
  filter.machine = machine;
  const std::string tag = gemm_best_tag(precision);
  std::vector<RunRecord> runs;
  try {
    runs = store.list_runs(filter);  // newest first
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    return std::nullopt;  // the store has never seen this machine
  }
  for (const RunRecord& run : runs) {
    if (run.status != "ok" || run.device != device) continue;
    const MetricRecord* m = run.find_metric(tag);
    if (m == nullptr) continue;
    return MeasuredPeak{m->value,           m->unit,       precision, run.device, run.id,
                        run.created_unix_s, m->description};
  }
  return std::nullopt;
}

}  // namespace dlbench::store
