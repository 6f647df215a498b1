// Data-parallel scaling in a report: the stored runs of one workload at several replica
// counts (dlbench scale sweeps, mpirun runs, or single runs that happen to match), grouped,
// with speedup and scaling efficiency against the smallest count.
//
// speedup = throughput / throughput_base and scaling efficiency as result::scaling_efficiency
// (bench/result/scaling_math.h) defines it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/report/report_data.h"

namespace dlbench::report {

// What a stored run says about its data parallelism. Runs without a "data_parallel" object
// (single-device runs, framework peers) are one replica launched "single".
int run_replicas(const store::RunRecord& run);
std::string run_launch(const store::RunRecord& run);  // "single", "threads" or "mpi"

struct ScalingRow {
  std::int64_t run_id = 0;
  int replicas = 1;
  std::string launch;  // "single", "threads" or "mpi"
  std::int64_t global_batch = 0;
  double throughput = 0;  // samples/s over all replicas
  double speedup = 1;
  double efficiency = 1;
  std::optional<bool> replicas_identical;  // empty for one replica, or when not recorded
  // "1/40": measured steps over 1.1x the median step on some replica, of those measured; empty
  // for one replica, or when the run recorded no replica steps (before 2026-12-01).
  std::string slow_steps;
  std::string interconnect;
  std::string communicator;
};

// One workload on one machine and device kind, at two or more replica counts.
struct ScalingGroup {
  std::string workload;  // "resnet50 train fp16 b128 224px" (b = per-replica batch)
  std::string device;    // "cuda", "cpu"
  std::int64_t machine_id = 0;
  std::string machine;  // what it is: "1x NVIDIA H100 80GB HBM3 · AMD EPYC (16 cores)"
  int base_replicas = 1;
  double base_throughput = 0;
  // By replicas, then launch (single and threads before mpi); the newest run of a (replicas,
  // launch) pair wins, as in the other charts.
  std::vector<ScalingRow> rows;
};

// Groups the successful runs (oldest first) by machine, device kind, framework, model, mode,
// precision, per-replica batch and input; keeps the groups that span two or more replica
// counts, in the order their first run appears. The base is the smallest count's run,
// preferring a single-process run (single or threads) over an mpi one at that count.
std::vector<ScalingGroup> scaling_groups(const std::vector<store::RunRecord>& runs);

// One table per group (id "scaling"); the caption says how to read them.
Table scaling_table(const ScalingGroup& group);
std::string scaling_title(const ScalingGroup& group);
extern const char* const kScalingCaption;

}  // namespace dlbench::report
