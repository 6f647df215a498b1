// How well a run used the machine (issue 19): its model FLOPs utilization against the measured
// peak of its precision, and its energy from the GPUs' energy counters. Pure arithmetic on what
// a run measured, so tests feed it made-up numbers; the store finds the peak (run_mfu.h).
#pragma once

#include <optional>
#include <string>

#include "bench/result/run_result.h"
#include "bench/telemetry/summary.h"
#include "engine/core/run_modes.h"

namespace dlbench::result {

// The `dlbench micro gemm` precision whose peak bounds a run of `p`: strict fp32 against the
// strict fp32 product, tf32 against tf32, fp16 and bf16 against their own tensor-core products.
std::string gemm_precision(Precision p);

// MFU = achieved FLOP/s / peak FLOP/s (a ratio, 0.41 for 41 %); NaN without a positive peak or
// a finite achieved rate.
double model_flops_utilization(double achieved_flops_per_s, double peak_flops_per_s);

// Energy over the measured window, summed over every sampled GPU: the energy counters' increase
// (J) and their differenced rate (the mean board power, W).
struct EnergyUse {
  double joules = 0;
  double samples = 0;  // processed in the measured window
  double samples_per_joule = 0;
  double mean_power_w = 0;
};

// nullopt when no GPU energy counter had a value (CPU runs, NVML without the counter) or the
// window processed nothing.
std::optional<EnergyUse> energy_use(const telemetry::Summary& telemetry, double samples);

// Adds `energy/samples_per_joule`, `energy/joules_per_sample` and `power/mean_w` to a run whose
// telemetry saw GPU energy; nothing otherwise. `sampled_share`: the share of the run's samples
// that the sampled GPUs processed (an MPI job over several nodes samples rank 0's node only).
void add_energy_metrics(RunResult& r, double sampled_share = 1.0);

}  // namespace dlbench::result
