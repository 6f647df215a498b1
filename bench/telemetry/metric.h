// What a telemetry metric is, and one sample of all of them.
//
// Every metric declares how its readings combine over a window, because averaging the wrong
// thing is how "GPU utilization" numbers go wrong:
//   kLevel           a level read at the tick (memory used, clock, temperature, instant power):
//                    time-weighted mean by the trapezoid rule between consecutive samples.
//   kIntervalAverage an average over the interval that ends at the tick (GPM activity, NVML
//                    utilization, system CPU %): each value weighs its interval's length; a
//                    source may also give one whole-window figure (GPM first vs last sample).
//   kCounter         a cumulative counter (energy, bytes, CPU seconds): differenced over the
//                    window; mean = total increase / covered time, min/max/p95 over intervals.
//   kBitmask         flags (clock-event reasons): ORed over the window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::telemetry {

enum class MetricKind { kLevel, kIntervalAverage, kCounter, kBitmask };

const char* to_string(MetricKind kind);

struct MetricSpec {
  std::string name;   // "gpu0.sm_active", "process.cpu"
  std::string label;  // "SM activity (GPM)", for people
  // Unit of the summarized value: of the level, or of the counter's rate ("%", "W", "B/s").
  std::string unit;
  MetricKind kind = MetricKind::kLevel;
  // Counters only: unit of the cumulative value ("J", "B", "s") and the factor that turns
  // its increase per second into `unit` (100 for CPU seconds per second -> % of one core).
  std::string total_unit;
  double rate_scale = 1.0;
  // Bitmasks only: name of bit i, empty where unnamed.
  std::vector<std::string> bits;
};

MetricSpec level_metric(std::string name, std::string label, std::string unit);
MetricSpec interval_metric(std::string name, std::string label, std::string unit);
MetricSpec counter_metric(std::string name, std::string label, std::string rate_unit,
                          std::string total_unit, double rate_scale);
MetricSpec bitmask_metric(std::string name, std::string label, std::vector<std::string> bits);

// Both clocks of one tick: CLOCK_MONOTONIC for intervals, CLOCK_REALTIME for the record.
struct Tick {
  std::int64_t monotonic_ns = 0;
  std::int64_t unix_ns = 0;
  // The first or last sample of a window. Counters that are costly to read (NVML's energy
  // counter takes ~4 ms of CPU on an H100) are read there and at most once a second between,
  // so the window's difference stays exact while the sampler stays cheap.
  bool window_edge = false;
};

Tick now_tick();

// One row: a value per metric, NaN where the metric had no value at this tick.
struct Sample {
  Tick tick;
  std::vector<double> values;
  // When each value was read (CLOCK_MONOTONIC, the middle of its source's read); empty: at
  // tick. Counters are differenced over these times: a source read long after the tick (a
  // sampler thread preempted on a busy machine) would otherwise put the delay into one
  // interval's increase but not its length (two busy cores read as 500 % of a core).
  std::vector<std::int64_t> read_ns = {};
};

// The time metric m of a row was read.
inline std::int64_t read_time_ns(const Sample& row, std::size_t m) {
  return m < row.read_ns.size() ? row.read_ns[m] : row.tick.monotonic_ns;
}

}  // namespace dlbench::telemetry
