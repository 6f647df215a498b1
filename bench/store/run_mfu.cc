#include "bench/store/run_mfu.h"

#include <cstdio>

#include "bench/result/efficiency.h"
#include "bench/store/run_record.h"

namespace dlbench::store {

namespace {

constexpr double kTera = 1e12;

std::string significant(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

}  // namespace

RunMfu add_mfu_metric(result::RunResult& r, Store& store) {
  RunMfu out;
  out.precision = result::gemm_precision(r.config.precision);
  out.device = to_string(r.config.launch.device);
  if (r.data_parallel) out.replicas = r.data_parallel->replicas;
  const std::string machine = machine_record(r.environment).fingerprint;
  out.peak = newest_measured_peak(store, machine, out.device, out.precision);
  if (!out.peak || out.peak->unit != "TFLOP/s") return out;
  const double peak_flops = out.peak->value * kTera * out.replicas;
  if (r.measured_steps > 0)
    out.mfu = result::model_flops_utilization(r.flops_per_sample * r.throughput, peak_flops);
  if (std::isfinite(out.mfu))
    result::add_metric(
        r, "compute/mfu", out.mfu, "ratio",
        "achieved FLOP/s / the measured " + out.precision + " peak of " + out.device + ", " +
            significant(out.peak->value) + " TFLOP/s" +
            (out.replicas > 1 ? " x " + std::to_string(out.replicas) + " replicas" : "") +
            " (micro gemm run " + std::to_string(out.peak->run_id) + ": " + out.peak->description +
            ")");
  return out;
}

}  // namespace dlbench::store
