// The summary of a sampled window: per metric a mean, min, max, p95 and sample count, combined
// the way the metric's kind says (metric.h). A pure function of the samples, so tests can feed
// it made-up rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/telemetry/metric.h"
#include "engine/core/reported.h"

namespace dlbench::telemetry {

struct MetricSummary {
  MetricSpec spec;
  std::size_t samples = 0;  // readings that had a value (and were used)
  // Levels and interval averages: of the values; counters: of the per-interval rates (mean =
  // total increase / covered time). Missing with the reason when the metric had no value.
  Reported<double> mean;
  Reported<double> min;
  Reported<double> max;
  Reported<double> p95;
  Reported<double> window;       // the source's whole-window figure, when it gives one
  Reported<double> total;        // counters: increase over the window, in spec.total_unit
  Reported<std::uint64_t> mask;  // bitmasks: every reading ORed
  // Bitmasks: per bit, the share of the window (0..1) during which it was set. Each reading
  // stands for half the time to its neighbours, so an uneven tick weighs what it covered.
  std::vector<double> bit_share;
  std::string reason;  // empty when the metric had a value
  bool available() const { return reason.empty(); }
};

struct Summary {
  double interval_s = 0;
  std::int64_t start_unix_ns = 0;  // the first sample
  double duration_s = 0;           // first to last sample
  std::size_t samples = 0;
  double sampler_cpu_s = 0;  // CPU time the sampler itself spent reading
  std::vector<MetricSummary> metrics;
  std::vector<std::string> notes;

  // nullptr when there is no metric of that name.
  const MetricSummary* find(const std::string& name) const;
};

// reasons[m]: why metric m had no value at its latest missing reading. window[m]: the
// source's whole-window figure, NaN when none. interval_s: the sampling interval.
std::vector<MetricSummary> summarize(const std::vector<MetricSpec>& specs,
                                     const std::vector<Sample>& samples,
                                     const std::vector<std::string>& reasons,
                                     const std::vector<double>& window, double interval_s);

// A counter's rate over the interval from `previous` to `current`, in spec.unit; NaN when
// either reading is missing, the interval is empty, or the counter went backwards (reset).
double interval_rate(const MetricSpec& spec, const Sample& previous, const Sample& current,
                     std::size_t metric);

// The p-th quantile (0..1) by linear interpolation between order statistics.
double quantile(std::vector<double> values, double p);

// Names of the bits set in mask ("sw_power_cap"); "0x..." for unnamed ones.
std::vector<std::string> bit_names(const MetricSpec& spec, std::uint64_t mask);

}  // namespace dlbench::telemetry
