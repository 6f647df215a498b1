// `dlbench runs export` as tables and for dashboards:
// - csv: one row per run and metric (long; pandas' pivot or a spreadsheet's filter);
// - csv --wide: one row per run, one column per headline metric, named by its tag;
// - benchmark-json: [{name, unit, value, extra}], what github-action-benchmark's
//   customBiggerIsBetter tool (and dashboards like it) reads: each run's throughput, named by
//   its workload and hardware so a series follows one machine over commits.
// Every row carries the columns people filter on: when (ISO 8601, UTC), CPU, GPU name and count,
// framework, replicas and the precision as it is known ("fp32 (strict)": TF32 off).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bench/store/records.h"

namespace dlbench::store {

// What a run ran on and how, read from its record.
struct RunColumns {
  std::string created_iso;     // "2026-11-22T05:37:09Z"
  std::string cpu_model;       // of the machine
  std::string gpu_name;        // of the run's GPUs ("" on the CPU); "A + B" when they differ
  int gpu_count = 0;           // GPUs the run used (0 on the CPU)
  int replicas = 1;            // data-parallel replicas (GPUs or processes)
  std::string precision_name;  // "fp32 (strict)", "tf32", "fp16", "bf16"
  std::string hardware;        // "1x NVIDIA H100 80GB HBM3", "AMD EPYC (CPU)"
};
RunColumns run_columns(const RunRecord& run);

// "fp32" -> "fp32 (strict)": dlbench's fp32 runs with TF32 off.
std::string precision_name(const std::string& precision);
// "2026-11-22T05:37:09Z"
std::string iso_time(std::int64_t unix_s);

// The metrics --wide gives a column each, in order.
extern const std::vector<std::string> kHeadlineMetrics;

void export_csv(const std::vector<RunRecord>& runs, std::ostream& out);
void export_csv_wide(const std::vector<RunRecord>& runs, std::ostream& out);
// Runs with a measured throughput; of several runs of one name, the first given (the newest,
// as list_runs orders them).
void export_benchmark_json(const std::vector<RunRecord>& runs, std::ostream& out);

}  // namespace dlbench::store
