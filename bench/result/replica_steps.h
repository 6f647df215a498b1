// Each replica's measured steps in a data-parallel run, on one clock: when it started each step
// and how long the step took there. In synchronous data parallelism every replica waits for the
// slowest one in the gradient all-reduce, so a slow step shows on all of them; what tells the
// replicas apart is when each started the step (a replica whose host was busy starts it late,
// and the others wait for it). Start times compare on one node (steady_clock is the machine's
// monotonic clock, shared by threads and processes); across nodes they do not.
#pragma once

#include <string>
#include <vector>

namespace dlbench::result {

struct ReplicaSteps {
  std::vector<double> start_ms;  // since the first start of the first measured step, any replica
  std::vector<double> ms;        // the step's wall time on this replica
};

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
};

// The slow steps of `replicas` (at least one, all with as many starts as times) and who started
// each step last. Replicas with fewer steps than others are read up to the shortest.
Stragglers find_stragglers(const std::vector<ReplicaSteps>& replicas, double ratio = 1.10);

// The terminal's one line: "none of 30 steps over 1.10x the median step (28.7 ms)", or the
// count, the first `listed` slow steps and the replica that started the most steps last.
std::string stragglers_text(const Stragglers& s, int listed = 5);

}  // namespace dlbench::result
