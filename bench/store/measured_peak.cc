#include "bench/store/measured_peak.h"

#include <functional>
#include <vector>

#include "engine/core/error.h"

namespace dlbench::store {

std::string micro_workload(const std::string& benchmark) {
  return "micro " + benchmark;
}

std::string gemm_best_tag(const std::string& precision) {
  return "gemm/" + precision + "/best";
}

namespace {

// The newest ok run of `benchmark` on `machine` and `device` that holds one of `tags`; of its
// tags, the largest value. `name_of` turns the tag into MeasuredPeak::precision.
std::optional<MeasuredPeak> newest_micro_metric(
    Store& store, const std::string& machine, const std::string& device,
    const std::string& benchmark, const std::vector<std::string>& tags,
    const std::function<std::string(const std::string&)>& name_of) {
  RunFilter filter;
  filter.model = micro_workload(benchmark);
  filter.machine = machine;
  std::vector<RunRecord> runs;
  try {
    runs = store.list_runs(filter);  // newest first
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    return std::nullopt;  // the store has never seen this machine
  }
  for (const RunRecord& run : runs) {
    if (run.status != "ok" || run.device != device) continue;
    const MetricRecord* best = nullptr;
    std::string best_tag;
    for (const std::string& tag : tags)
      if (const MetricRecord* m = run.find_metric(tag); m && (!best || m->value > best->value)) {
        best = m;
        best_tag = tag;
      }
    if (best == nullptr) continue;
    return MeasuredPeak{best->value, best->unit,         name_of(best_tag), run.device,
                        run.id,      run.created_unix_s, best->description};
  }
  return std::nullopt;
}

}  // namespace

std::optional<MeasuredPeak> newest_measured_peak(Store& store, const std::string& machine,
                                                 const std::string& device,
                                                 const std::string& precision) {
  return newest_micro_metric(store, machine, device, "gemm", {gemm_best_tag(precision)},
                             [&](const std::string&) { return precision; });
}

std::optional<MeasuredPeak> newest_measured_bandwidth(Store& store, const std::string& machine,
                                                      const std::string& device) {
  return newest_micro_metric(
      store, machine, device, "bandwidth", {"bandwidth/copy/best", "bandwidth/triad/best"},
      [](const std::string& tag) {
        return tag.substr(tag.find('/') + 1, tag.rfind('/') - tag.find('/') - 1);
      });
}

}  // namespace dlbench::store
