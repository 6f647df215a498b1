// Sampler: reads every source once per interval on its own thread, on CLOCK_MONOTONIC, from
// start() to stop(), and keeps every sample with its real timestamp. start() and stop() each
// take a sample themselves, so the window's counters are differenced from exactly start() to
// exactly stop(). `dlbench monitor` wraps a command with it; `dlbench run` wraps its measured
// phase.
//
//   telemetry::Sampler sampler(telemetry::make_sources(options).sources, 0.5);
//   sampler.start();
//   ... measured phase ...
//   sampler.stop();
//   telemetry::Summary summary = sampler.summary();
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/telemetry/metric.h"
#include "bench/telemetry/source.h"
#include "bench/telemetry/summary.h"

namespace dlbench::telemetry {

constexpr double kDefaultIntervalS = 0.5;
constexpr double kMinIntervalS = 0.1;
constexpr double kMaxIntervalS = 60.0;

// Throws dlbench::Error (usage) when interval_s is outside [kMinIntervalS, kMaxIntervalS].
void check_interval(double interval_s);

class Sampler {
 public:
  // Throws dlbench::Error (usage) for an interval out of range.
  Sampler(std::vector<std::unique_ptr<Source>> sources, double interval_s);
  ~Sampler();  // stops a running sampler; never throws
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Starts a new window: drops earlier samples, takes the first one now, then one every
  // interval on the sampler thread.
  void start();
  // Takes the last sample now and ends the window. Does nothing when not running.
  void stop();
  bool running() const { return thread_.joinable(); }

  double interval_s() const { return interval_s_; }
  // Every source's metrics, in sample-column order.
  const std::vector<MetricSpec>& metrics() const { return metrics_; }
  // A copy of the samples so far; safe while running.
  std::vector<Sample> samples() const;
  // The window's summary; call after stop().
  Summary summary() const;

 private:
  void loop();
  void take_sample(bool window_edge);
  void finish_window();

  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<std::size_t> offsets_;  // first column of each source
  std::vector<MetricSpec> metrics_;
  double interval_s_;

  mutable std::mutex mutex_;  // guards samples_ and stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<Sample> samples_;
  std::vector<std::string> reasons_;  // latest reason per metric; written by the reading thread
  std::vector<double> window_;        // whole-window figures from Source::end
  std::vector<std::string> notes_;    // the sampler's own (a source that threw)
  double cpu_seconds_ = 0;            // CPU the sampler spent reading, on any thread
  std::thread thread_;
};

}  // namespace dlbench::telemetry
