// Scaling sweeps: the same workload and per-GPU batch on 1..N GPUs, and what each count
// gained. speedup_N = throughput_N / throughput_base and scaling efficiency =
// (throughput_N / N) / (throughput_base / base), where base is the sweep's smallest count
// (normally 1 GPU, so efficiency = throughput_N / (N x throughput_1)).
#pragma once

#include <vector>

namespace dlbench::result {

struct ScalingPoint {
  int gpus = 1;
  double throughput = 0;  // samples/s over all GPUs
  double speedup = 1;
  double efficiency = 1;
};

// (throughput / gpus) / (base_throughput / base_gpus); NaN without a usable base. The one
// definition of scaling efficiency (the report's scaling section calls it too).
double scaling_efficiency(int gpus, double throughput, int base_gpus, double base_throughput);

// Pure: the points of measured (gpus, throughput) pairs in sweep order.
std::vector<ScalingPoint> scaling_points(const std::vector<int>& gpus,
                                         const std::vector<double>& throughputs);

}  // namespace dlbench::result
