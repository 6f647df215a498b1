// Source: one provider of metrics (the process tree, the system, the cgroup, one GPU through
// NVML, one GPU's GPM). The sampler calls a source from one thread at a time: begin() and the
// first read() in start(), read() on the sampler thread, the last read() and end() in stop().
#pragma once

#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/telemetry/metric.h"

namespace dlbench::telemetry {

// Where a source writes one tick: a value or the reason there is none, per metric, indexed
// like the source's metrics(). Unset metrics stay NaN with their previous reason.
class Readings {
 public:
  Readings(std::span<double> values, std::span<std::string> reasons)
      : values_(values), reasons_(reasons) {}

  void set(std::size_t metric, double value) { values_[metric] = value; }
  void missing(std::size_t metric, std::string_view reason) {
    values_[metric] = std::nan("");
    if (reasons_[metric] != reason) reasons_[metric] = reason;
  }
  std::size_t size() const { return values_.size(); }

 private:
  std::span<double> values_;
  std::span<std::string> reasons_;
};

class Source {
 public:
  virtual ~Source() = default;

  // Fixed for the source's lifetime.
  virtual const std::vector<MetricSpec>& metrics() const = 0;
  // Once, before the first read of a window.
  virtual void begin() {}
  // Every tick: a value or a reason for each metric.
  virtual void read(const Tick& tick, Readings& out) = 0;
  // Once, after the last read: whole-window figures for metrics that have one (a GPM metric
  // from the first and last samples, system CPU % from the first and last /proc/stat).
  virtual void end(Readings& window) { (void)window; }
  // Remarks for the summary, e.g. why a whole group of metrics is unavailable.
  virtual std::vector<std::string> notes() const { return {}; }
};

}  // namespace dlbench::telemetry
