#include "bench/runner/scaling.h"

#include "engine/core/error.h"

namespace dlbench::runner {

std::vector<ScalingPoint> scaling_points(const std::vector<int>& gpus,
                                         const std::vector<double>& throughputs) {
  DLBENCH_CHECK(gpus.size() == throughputs.size(), "one throughput per GPU count");
  std::vector<ScalingPoint> points;
  if (gpus.empty()) return points;
  const double base_per_gpu = throughputs[0] / gpus[0];
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    ScalingPoint p;
    p.gpus = gpus[i];
    p.throughput = throughputs[i];
    p.speedup = throughputs[i] / throughputs[0];
    p.efficiency = (throughputs[i] / gpus[i]) / base_per_gpu;
    points.push_back(p);
  }
  return points;
}

RunConfig scaling_config(RunConfig base, int gpus) {
  base.device = Device::cuda(0);
  base.gpus = gpus;
  base.launch = gpus > 1 ? dist::LaunchMode::kThreads : dist::LaunchMode::kSingle;
  return base;
}

std::vector<RunResult> run_scaling(const RunConfig& base, const std::vector<int>& gpus,
                                   const RunHooks& hooks,
                                   const std::function<void(const RunResult&)>& on_run) {
  std::vector<RunResult> results;
  for (int n : gpus) {
    results.push_back(run_workload(scaling_config(base, n), hooks));
    if (on_run) on_run(results.back());
  }
  return results;
}

}  // namespace dlbench::runner
