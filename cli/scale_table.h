// The table `dlbench scale` prints: per GPU count the throughput, speedup, efficiency, the
// median and mean step, how many steps were slow on some replica, and the replicas' agreement;
// then who started the slow steps late. Split from scale_command.cc so tests build the table
// from made-up runs (the command itself needs GPUs).
#pragma once

#include <ostream>
#include <vector>

#include "bench/result/run_result.h"
#include "bench/result/scaling_math.h"

namespace dlbench::cli {

// `results` and `points` in the same order, one per GPU count, the first the base.
void print_scale_table(std::ostream& out, const std::vector<result::RunResult>& results,
                       const std::vector<result::ScalingPoint>& points);

}  // namespace dlbench::cli
