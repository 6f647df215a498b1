#include "bench/micro/micro_record.h"

#include <ctime>

#include "bench/store/measured_peak.h"
#include "bench/store/run_record.h"

namespace dlbench::micro {

store::RunRecord micro_record(const MicroRecordInput& in) {
  store::RunRecord r;
  r.created_unix_s = std::time(nullptr);
  r.framework = "native";
  r.model = store::micro_workload(in.benchmark);
  r.mode = "micro";
  r.precision = in.precision;
  r.device = in.device;
  r.config = in.result.contains("config") ? in.result["config"] : nlohmann::json::object();
  r.result = in.result;
  if (in.environment.contains("dlbench")) r.result["dlbench"] = in.environment["dlbench"];
  r.machine = store::machine_record(in.environment);
  r.metrics = in.metrics;
  if (in.wrong > 0) {
    r.status = "failed";
    r.error = std::to_string(in.wrong) + " wrong elements in the checked output";
  }
  return r;
}

}  // namespace dlbench::micro
