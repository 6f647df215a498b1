// A run's model FLOPs utilization (issue 19): its achieved FLOP/s against the measured peak of
// its precision on its device, the newest ok `dlbench micro gemm` stored for the same machine
// (the same fingerprint the run is stored under). The runner knows nothing of the store, so
// whoever stores a run looks the peak up here before saving it.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "bench/result/run_result.h"
#include "bench/store/measured_peak.h"
#include "bench/store/store.h"

namespace dlbench::store {

struct RunMfu {
  std::string precision;  // the micro gemm precision looked up: "fp16"
  std::string device;     // "cuda:0", "cpu"
  int replicas = 1;       // data-parallel runs: the peak counts once per replica
  std::optional<MeasuredPeak> peak;
  double mfu = NAN;  // ratio; NaN without a peak or without a measured rate
};

// Looks the peak up and, where there is one and the run measured a rate, adds `compute/mfu`
// (a ratio whose description names the peak and the micro gemm run it came from).
RunMfu add_mfu_metric(result::RunResult& r, Store& store);

}  // namespace dlbench::store
