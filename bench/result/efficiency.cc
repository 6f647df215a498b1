#include "bench/result/efficiency.h"

#include <cmath>

namespace dlbench::result {

std::string gemm_precision(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";  // strict: TF32 off in both
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
  }
  return "fp32";
}

double model_flops_utilization(double achieved_flops_per_s, double peak_flops_per_s) {
  if (!(peak_flops_per_s > 0) || !std::isfinite(achieved_flops_per_s)) return NAN;
  return achieved_flops_per_s / peak_flops_per_s;
}

namespace {

// "gpu0.energy", "gpu12.energy": the NVML energy counter of one GPU (nvml_source.cc).
bool is_gpu_energy(const std::string& name) {
  const std::string suffix = ".energy";
  return name.rfind("gpu", 0) == 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<EnergyUse> energy_use(const telemetry::Summary& telemetry, double samples) {
  EnergyUse e;
  bool any = false, every_rate = true;
  for (const telemetry::MetricSummary& m : telemetry.metrics) {
    if (!is_gpu_energy(m.spec.name) || !m.total.available()) continue;
    any = true;
    e.joules += m.total.value();
    // The counter's mean rate is its increase over the time it covered: the board's mean power.
    if (m.mean.available())
      e.mean_power_w += m.mean.value();
    else
      every_rate = false;
  }
  if (!any || !(e.joules > 0) || !(samples > 0)) return std::nullopt;
  if (!every_rate)
    e.mean_power_w = telemetry.duration_s > 0 ? e.joules / telemetry.duration_s : NAN;
  e.samples = samples;
  e.samples_per_joule = samples / e.joules;
  return e;
}

void add_energy_metrics(RunResult& r, double sampled_share) {
  if (!r.telemetry) return;
  const std::optional<EnergyUse> e =
      energy_use(r.telemetry->summary, r.throughput * r.measured_seconds * sampled_share);
  if (!e) return;
  const std::string source = "NVML energy counters over the measured steps, summed over the GPUs";
  add_metric(r, "energy/samples_per_joule", e->samples_per_joule, "samples/J",
             "samples processed / GPU board energy (" + source + ")");
  add_metric(r, "energy/joules_per_sample", 1 / e->samples_per_joule, "J/sample",
             "GPU board energy / samples processed (" + source + ")");
  if (std::isfinite(e->mean_power_w))
    add_metric(r, "power/mean_w", e->mean_power_w, "W",
               "mean GPU board power: the energy counters' increase / the time they covered");
}

}  // namespace dlbench::result
