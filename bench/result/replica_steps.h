// Each replica's measured steps in a data-parallel run, on one clock: when it started each step
// and how long the step took there. In synchronous data parallelism every replica waits for the
// slowest one in the gradient all-reduce, so a slow step shows on all of them; what tells the
// replicas apart is when each started the step (a replica whose host was busy starts it late,
// and the others wait for it). Start times compare on one node (steady_clock is the machine's
// monotonic clock, shared by threads and processes); across nodes they do not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/telemetry/window.h"

namespace dlbench::result {

struct ReplicaSteps {
  std::vector<double> start_ms;  // since the first start of the first measured step, any replica
  std::vector<double> ms;        // the step's wall time on this replica
};

// A step is slow past this times the median step.
inline constexpr double kSlowStepRatio = 1.10;

// A step whose slowest replica took over the ratio times the median step.
struct SlowStep {
  int step = 0;           // 0-based, among the measured steps
  double ms = 0;          // its slowest replica's time
  int late_replica = 0;   // the replica that started it last
  double late_by_ms = 0;  // after the first replica to start it
};

struct Stragglers {
  int steps = 0;         // measured steps every replica has
  double median_ms = 0;  // of every replica's step times
  double ratio = 0;      // a step is slow past ratio x median_ms
  std::vector<SlowStep> slow;
  std::vector<int> started_last;  // per replica: in how many steps it started last
  // How many slow steps, and how many of all steps, a telemetry sample's reads overlapped; -1:
  // not known (no telemetry). Alike shares clear the sampler; a higher share among the slow
  // steps points at it.
  int slow_with_sample = -1;
  int steps_with_sample = -1;
};

// When the telemetry sampler was reading, on the steps' clock (ms since their origin).
struct Span {
  double begin_ms = 0;
  double end_ms = 0;
};

// The slow steps of `replicas` (at least one, all with as many starts as times) and who started
// each step last. Replicas with fewer steps than others are read up to the shortest. With
// `samples` (telemetry was on), also which steps a sample's reads overlapped: a step lasts from
// its first replica's start to its last replica's end.
Stragglers find_stragglers(const std::vector<ReplicaSteps>& replicas, double ratio = kSlowStepRatio,
                           const std::optional<std::vector<Span>>& samples = std::nullopt);

// find_stragglers over a run's replica steps, with the reads of its telemetry samples (none:
// telemetry was off) put on the steps' clock: `origin_ms` is start_ms 0 on CLOCK_MONOTONIC, the
// sampler's clock.
Stragglers run_stragglers(const std::vector<ReplicaSteps>& replicas, double origin_ms,
                          const telemetry::Recording* telemetry);

// A stored run's replica steps: its data_parallel object's "replica_steps" (run_result.cc writes
// them). Empty where the run holds none or they do not read as numbers, start for start.
std::vector<ReplicaSteps> replica_steps_from_json(const nlohmann::json& data_parallel);

// "1/40": the slow steps of those measured, for a table's cell.
std::string slow_steps_cell(const Stragglers& s);

// The terminal's one line: "none of 30 steps over 1.10x the median step (28.7 ms)", or the
// count, the first `listed` slow steps, the replica that started the most steps last and, when
// known, how many slow steps held a telemetry sample.
std::string stragglers_text(const Stragglers& s, int listed = 5);

}  // namespace dlbench::result
