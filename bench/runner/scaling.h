// Scaling sweeps: the same workload and per-GPU batch on 1..N GPUs (the arithmetic of speedup
// and efficiency is in bench/result/scaling_math.h).
#pragma once

#include <functional>
#include <vector>

#include "bench/result/scaling_math.h"
#include "bench/runner/workload_runner.h"

namespace dlbench::runner {

// The configuration of one count of a sweep: 1 GPU runs alone (no communicator, the number
// a user would compare against), more run a thread per GPU.
result::RunConfig scaling_config(result::RunConfig base, int gpus);

// Runs base on each count in order; on_run sees each result as it lands (to store it).
std::vector<result::RunResult> run_scaling(
    const result::RunConfig& base, const std::vector<int>& gpus, const RunHooks& hooks,
    const std::function<void(const result::RunResult&)>& on_run);

}  // namespace dlbench::runner
