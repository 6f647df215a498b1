#include "bench/runner/scaling.h"

namespace dlbench::runner {

result::RunConfig scaling_config(result::RunConfig base, int gpus) {
  base.launch = {gpus > 1 ? LaunchMode::kThreads : LaunchMode::kSingle, Device::cuda(0), gpus};
  return base;
}

std::vector<result::RunResult> run_scaling(
    const result::RunConfig& base, const std::vector<int>& gpus, const RunHooks& hooks,
    const std::function<void(const result::RunResult&)>& on_run) {
  std::vector<result::RunResult> results;
  for (int n : gpus) {
    results.push_back(run_workload(scaling_config(base, n), hooks));
    if (on_run) on_run(results.back());
  }
  return results;
}

}  // namespace dlbench::runner
