#include "bench/micro/bandwidth_bench.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "bench/micro/micro_pattern.h"
#include "engine/core/error.h"
#include "engine/core/memory.h"

namespace dlbench::micro {
namespace {

using Clock = std::chrono::steady_clock;

// Times `iters` runs of body after `warmup`, one by one, on the host clock, into row.
template <class Body>
void time_host(BandwidthRow& row, const BandwidthConfig& config, Body body) {
  time_row(row, config, [&] {
    const Clock::time_point start = Clock::now();
    body();
    return std::chrono::duration<double>(Clock::now() - start).count();
  });
}

}  // namespace

std::int64_t default_array_bytes(DeviceType device) {
  return device == DeviceType::kCpu ? std::int64_t{128} << 20 : std::int64_t{1} << 30;
}

void validate(const BandwidthConfig& c) {
  if (c.iters < 1)
    throw Error(ErrorKind::kUsage, "--iters must be at least 1, not " + std::to_string(c.iters));
  if (c.warmup < 0)
    throw Error(ErrorKind::kUsage, "--warmup must be at least 0, not " + std::to_string(c.warmup));
  if (c.array_bytes < kMinArrayBytes)
    throw Error(ErrorKind::kUsage,
                "--size must be at least 4K, not " + std::to_string(c.array_bytes) + " bytes",
                "e.g. --size 1G");
}

double gb_per_s(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : 0;
}

void time_row(BandwidthRow& row, const BandwidthConfig& config,
              const std::function<double()>& seconds_of_one) {
  for (int i = 0; i < config.warmup; ++i) seconds_of_one();
  double total = 0, best = 0;
  for (int i = 0; i < config.iters; ++i) {
    const double s = seconds_of_one();
    total += s;
    best = i == 0 ? s : std::min(best, s);
  }
  row.iters = config.iters;
  row.best_time_us = best * 1e6;
  row.best_gb_per_s = gb_per_s(double(row.bytes_moved), best);
  row.mean_gb_per_s = gb_per_s(double(row.bytes_moved) * config.iters, total);
}

double BandwidthResult::best_gb_per_s() const {
  double best = 0;
  for (const BandwidthRow& r : rows) best = std::max(best, r.best_gb_per_s);
  return best;
}

BandwidthResult run_bandwidth_bench(const Device& device, BandwidthConfig config,
                                    std::optional<double> theoretical,
                                    const BandwidthHooks& hooks) {
  if (config.array_bytes == 0) config.array_bytes = default_array_bytes(device.type);
  validate(config);
  BandwidthHooks inner = hooks;
  inner.on_start = [&](const BandwidthResult& r) {
    if (!hooks.on_start) return;
    BandwidthResult shown = r;
    shown.theoretical_gb_per_s = theoretical;
    hooks.on_start(shown);
  };
  BandwidthResult r = device.type == DeviceType::kCpu
                          ? run_bandwidth_cpu(config, inner)
                          : run_bandwidth_cuda(device.index, config, inner);
  r.theoretical_gb_per_s = theoretical;
  for (const BandwidthRow& row : r.rows) r.wrong += row.wrong;
  return r;
}

BandwidthResult run_bandwidth_cpu(const BandwidthConfig& config, const BandwidthHooks& hooks) {
  BandwidthResult r;
  r.device = "cpu";
  const int threads = omp_get_max_threads();
  r.backend = "cpu (" + std::to_string(threads) + " threads)";
  r.method =
      "OpenMP loops over f32 arrays, " + std::to_string(threads) + " threads, static schedule";
  r.config = config;
  if (hooks.on_start) hooks.on_start(r);
  const std::int64_t n = config.array_bytes / std::int64_t(sizeof(float));
  HostAllocator host;
  Buffer xb(host, std::size_t(n) * sizeof(float)), yb(host, std::size_t(n) * sizeof(float)),
      zb(host, std::size_t(n) * sizeof(float));
  float* x = static_cast<float*>(xb.data());
  float* y = static_cast<float*>(yb.data());
  float* z = static_cast<float*>(zb.data());
  // First touch by the threads that will use each page (NUMA placement, as STREAM does).
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = copy_value(std::uint64_t(i));
    y[i] = -1.0f;
    z[i] = triad_c(std::uint64_t(i));
  }
  auto count_wrong = [&](bool triad) {
    std::int64_t wrong = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t u = std::uint64_t(i);
      const float want = triad ? triad_b(u) + kTriadScalar * triad_c(u) : copy_value(u);
      wrong += y[i] == want ? 0 : 1;
    }
    return wrong;
  };

  BandwidthRow copy{"copy", 2 * n * std::int64_t(sizeof(float))};
  time_host(copy, config, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) y[i] = x[i];
  });
  copy.checked = n;
  copy.wrong = count_wrong(false);
  r.rows.push_back(copy);
  if (hooks.on_row) hooks.on_row(r.rows.back());

#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = triad_b(std::uint64_t(i));
    y[i] = -1.0f;
  }
  BandwidthRow triad{"triad", 3 * n * std::int64_t(sizeof(float))};
  time_host(triad, config, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + kTriadScalar * z[i];
  });
  triad.checked = n;
  triad.wrong = count_wrong(true);
  r.rows.push_back(triad);
  if (hooks.on_row) hooks.on_row(r.rows.back());
  return r;
}

nlohmann::json to_json(const BandwidthResult& r) {
  using nlohmann::json;
  json rows = json::array();
  for (const BandwidthRow& row : r.rows)
    rows.push_back({{"test", row.test},
                    {"bytes_moved", row.bytes_moved},
                    {"iters", row.iters},
                    {"best_gb_per_s", row.best_gb_per_s},
                    {"mean_gb_per_s", row.mean_gb_per_s},
                    {"best_time_us", row.best_time_us},
                    {"checked", row.checked},
                    {"wrong", row.wrong}});
  return {{"schema", "dlbench.micro.bandwidth/1"},
          {"device", r.device},
          {"backend", r.backend},
          {"method", r.method},
          {"config",
           {{"array_bytes", r.config.array_bytes},
            {"warmup", r.config.warmup},
            {"iters", r.config.iters}}},
          {"theoretical_gb_per_s",
           r.theoretical_gb_per_s ? json(*r.theoretical_gb_per_s) : json(nullptr)},
          {"rows", rows},
          {"wrong", r.wrong}};
}

std::vector<store::MetricRecord> metrics(const BandwidthResult& r) {
  std::vector<store::MetricRecord> out;
  for (const BandwidthRow& row : r.rows) {
    out.push_back({"bandwidth/" + row.test + "/best", row.best_gb_per_s, "GB/s",
                   "fastest iteration of " + row.test + " over " +
                       std::to_string(r.config.array_bytes) + "-byte arrays"});
    out.push_back({"bandwidth/" + row.test + "/mean", row.mean_gb_per_s, "GB/s",
                   "all bytes over all time of " + std::to_string(row.iters) + " iterations"});
  }
  if (r.theoretical_gb_per_s)
    out.push_back({"bandwidth/theoretical", *r.theoretical_gb_per_s, "GB/s",
                   "memory clock x bus width x 2, as dlbench info prints"});
  out.push_back({"bandwidth/wrong", double(r.wrong), "elements",
                 "destination elements that did not hold what the test wrote"});
  return out;
}

}  // namespace dlbench::micro
