// Made-up runs as the quick suite writes them on one H100: a machine environment as
// `dlbench info --json` has it, and per run the GPU telemetry (GPM activity, clocks, power,
// temperature, clock-event reasons with their share of the window) and a power timeline. For
// the report's tests and the browser test; the numbers are invented, only their shape is real.
#pragma once

#include <string>

#include "tests/store/store_test_util.h"

namespace dlbench::testing {

inline nlohmann::json h100_environment() {
  return {{"host",
           {{"hostname", "gpu-node-7"},
            {"cpu_model", "AMD EPYC 9654 96-Core Processor"},
            {"cores", 16},
            {"threads", 16},
            {"memory_bytes", 128.0 * (1ull << 30)},
            {"os", "Debian GNU/Linux 12 (bookworm)"},
            {"kernel", "6.1.0"}}},
          {"gpu_software",
           {{"driver_version", "580.159.04"}, {"cuda_runtime", "13.0"}, {"cudnn", "9.14.0"}}},
          {"gpus", nlohmann::json::array({{{"name", "NVIDIA H100 80GB HBM3"},
                                           {"nvml_index", 0},
                                           {"memory_bytes", 79.6 * (1ull << 30)},
                                           {"sm_count", 132},
                                           {"max_sm_clock_mhz", 1980},
                                           {"memory_bandwidth_gb_per_s", 3352.0},
                                           {"power_limit_w", 700.0}}})},
          {"interconnect", {{"summary", "one GPU (PCIe Gen5 x16)"}}},
          {"dlbench", {{"version", "0.1.0"}, {"git_hash", "0123456789abcdef"}}}};
}

inline store::TelemetryMetricRecord telemetry(const std::string& name, const std::string& unit,
                                              double mean, double max) {
  store::TelemetryMetricRecord t;
  t.name = name;
  t.label = name;
  t.unit = unit;
  t.kind = "level";
  t.samples = 10;
  t.mean = mean;
  t.max = max;
  t.p95 = max;
  return t;
}

// One run on the H100; power_cap_percent > 0 makes its clocks throttled for that share.
inline store::RunRecord h100_run(const std::string& mode, const std::string& precision,
                                 double throughput, double power_cap_percent = 0) {
  store::RunRecord r = sample_run("resnet50", throughput);
  r.mode = mode;
  r.precision = precision;
  r.batch = mode == "train" ? 128 : 64;
  r.machine.fingerprint = "h100h100h100";
  r.machine.hostname = "gpu-node-7";
  r.machine.description = "AMD EPYC 9654 96-Core Processor, 16 cores, 1x NVIDIA H100 80GB HBM3";
  r.machine.environment = h100_environment();
  r.metrics.push_back({"compute/achieved_gflops", throughput * 24.6, "GFLOP/s", ""});
  r.telemetry = {telemetry("gpu0.sm_active", "%", 91, 95),
                 telemetry("gpu0.tensor_active", "%", 38, 45),
                 telemetry("gpu0.dram_active", "%", 52, 60),
                 telemetry("gpu0.sm_clock", "MHz", 1755, 1980),
                 telemetry("gpu0.memory_clock", "MHz", 2619, 2619),
                 telemetry("gpu0.power", "W", 640, 699),
                 telemetry("gpu0.temperature", "C", 61, 68),
                 telemetry("gpu0.memory_used", "B", 11.0 * (1ull << 30), 11.5 * (1ull << 30)),
                 telemetry("gpu0.kernel_busy", "%", 100, 100),
                 telemetry("process.cpu", "%", 101, 110)};
  store::TelemetryMetricRecord energy = telemetry("gpu0.energy", "W", 640, 700);
  energy.kind = "counter";
  energy.total = 640.0 * 5;
  energy.total_unit = "J";
  r.telemetry.push_back(energy);
  nlohmann::json clock_events = {{"kind", "bitmask"},
                                 {"samples", 10},
                                 {"mask", 0},
                                 {"flags", nlohmann::json::array()},
                                 {"share_percent", nlohmann::json::object()}};
  if (power_cap_percent > 0) {
    clock_events["mask"] = 4;
    clock_events["flags"] = {"sw_power_cap"};
    clock_events["share_percent"] = {{"sw_power_cap", power_cap_percent}};
  }
  r.result["measured_seconds"] = 5.0;
  r.result["step_time_ms"] = {
      {"median", 1000.0 * r.batch / throughput}, {"p95", 1.0}, {"cv", 0.01}};
  r.result["telemetry"] = {{"metrics", {{"gpu0.clock_events", clock_events}}}};
  r.samples = {{"gpu0.power", "W", {0, 1, 2, 3, 4}, {620, 650, 699, 640, 630}},
               {"gpu0.sm_clock", "MHz", {0, 1, 2, 3, 4}, {1980, 1755, 1650, 1755, 1800}}};
  return r;
}

}  // namespace dlbench::testing
