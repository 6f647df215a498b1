// dlbench micro bandwidth: how fast memory is read and written, STREAM style. GPUs: a float4
// copy kernel, cudaMemcpy device to device, and a triad kernel (a = b + s c), over arrays of
// 1 GiB by default, against the theoretical figure `dlbench info` prints. CPUs: the same copy
// and triad as OpenMP loops over host arrays.
//
// Bytes counted as STREAM counts them: copy and memcpy 2 x array (read + write), triad
// 3 x array; GB/s = 1e9 bytes per second. The best iteration's rate is the headline (as
// STREAM's), the mean rate is beside it. After each test the destination is checked element by
// element against the values it must hold (micro_pattern.h); `wrong` counts the others.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store/records.h"
#include "engine/core/device.h"

namespace dlbench::micro {

struct BandwidthConfig {
  std::int64_t array_bytes = 0;  // per array; 0: 1 GiB on GPUs, 128 MiB on CPUs
  int warmup = 3;
  int iters = 20;
};
std::int64_t default_array_bytes(DeviceType device);
// Error(kUsage) naming the flag: iters under 1, warmup under 0, arrays under 4 KiB.
void validate(const BandwidthConfig& config);
constexpr std::int64_t kMinArrayBytes = 4096;

struct BandwidthRow {
  std::string test;              // "copy", "memcpy", "triad"
  std::int64_t bytes_moved = 0;  // per iteration
  int iters = 0;
  double best_gb_per_s = 0;  // the fastest iteration's
  double mean_gb_per_s = 0;  // all bytes / all time
  double best_time_us = 0;
  std::int64_t checked = 0, wrong = 0;
};

struct BandwidthResult {
  std::string device, backend;
  std::string method;      // "float4 kernels, 256 threads a block; cudaMemcpyAsync"
  BandwidthConfig config;  // array_bytes filled in
  // From `dlbench info` (NVML's memory clock x bus width x 2); none on CPUs.
  std::optional<double> theoretical_gb_per_s;
  std::vector<BandwidthRow> rows;
  std::int64_t wrong = 0;
  double best_gb_per_s() const;  // over the rows
};

struct BandwidthHooks {
  std::function<void(const BandwidthResult&)> on_start;
  std::function<void(const BandwidthRow&)> on_row;
};

// Error(kResource) when the device does not exist or the arrays do not fit.
BandwidthResult run_bandwidth_bench(const Device& device, BandwidthConfig config,
                                    std::optional<double> theoretical_gb_per_s,
                                    const BandwidthHooks& hooks = {});
// The rate of `bytes` moved in `seconds`, in GB/s; 0 when seconds is not positive.
double gb_per_s(double bytes, double seconds);
// Runs `seconds_of_one` config.warmup times untimed, then config.iters times, and fills row's
// best and mean rates from the seconds each call returns (host clock or device events).
void time_row(BandwidthRow& row, const BandwidthConfig& config,
              const std::function<double()>& seconds_of_one);

nlohmann::json to_json(const BandwidthResult& result);
// bandwidth/<test>/best and /mean (GB/s), bandwidth/theoretical, bandwidth/wrong.
std::vector<store::MetricRecord> metrics(const BandwidthResult& result);

// The implementations; run_bandwidth_bench picks one.
BandwidthResult run_bandwidth_cpu(const BandwidthConfig& config, const BandwidthHooks& hooks);
BandwidthResult run_bandwidth_cuda(int device, const BandwidthConfig& config,
                                   const BandwidthHooks& hooks);

}  // namespace dlbench::micro
