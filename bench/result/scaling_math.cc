#include "bench/result/scaling_math.h"

#include <cmath>

#include "engine/core/error.h"

namespace dlbench::result {

double scaling_efficiency(int gpus, double throughput, int base_gpus, double base_throughput) {
  if (gpus <= 0 || base_gpus <= 0 || !(base_throughput > 0)) return NAN;
  return (throughput / gpus) / (base_throughput / base_gpus);
}

std::vector<ScalingPoint> scaling_points(const std::vector<int>& gpus,
                                         const std::vector<double>& throughputs) {
  DLBENCH_CHECK(gpus.size() == throughputs.size(), "one throughput per GPU count");
  std::vector<ScalingPoint> points;
  if (gpus.empty()) return points;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    ScalingPoint p;
    p.gpus = gpus[i];
    p.throughput = throughputs[i];
    p.speedup = throughputs[i] / throughputs[0];
    p.efficiency = scaling_efficiency(gpus[i], throughputs[i], gpus[0], throughputs[0]);
    points.push_back(p);
  }
  return points;
}

}  // namespace dlbench::result
