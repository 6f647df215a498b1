// The telemetry of one measured phase, written once for every runner: the native workload
// runner samples its own process during its measured steps, the peer runner a framework
// worker's process tree from its first measured step on, `dlbench monitor` a command's from
// its start to its exit. All get the same Recording.
//
//   MeasuredWindow window(config.telemetry, getpid(), config.telemetry_interval_s, nvml);
//   window.begin();            // the first call starts the sampler; later calls do nothing
//   ... measured steps ...
//   window.end();
//   result.telemetry = window.take();   // nullopt when disabled or never begun
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/nvml/nvml.h"
#include "bench/telemetry/metric.h"
#include "bench/telemetry/nvml_source.h"
#include "bench/telemetry/sources.h"
#include "bench/telemetry/summary.h"

namespace dlbench::telemetry {

class Sampler;

// What the sampler saw of a window: its summary (the sources' notes after the sampler's own),
// every metric in sample-column order, every sample, and the GPUs it sampled.
struct Recording {
  Summary summary;
  std::vector<MetricSpec> metrics;
  std::vector<Sample> samples;
  std::vector<GpuIdentity> gpus;
  std::string gpus_none_reason;  // why no GPU was sampled; empty when some were
};

class MeasuredWindow {
 public:
  // Samples the process tree of `root`, the system and the selected GPUs (every one NVML sees
  // by default), every interval_s; does nothing at all when !enabled. begin() checks the
  // interval (Error kUsage) and the selection (Error kResource for a GPU that is not there).
  MeasuredWindow(bool enabled, pid_t root, double interval_s,
                 std::shared_ptr<const nvml::Nvml> nvml, GpuSelection gpus = {});
  ~MeasuredWindow();  // stops a running sampler; never throws
  MeasuredWindow(const MeasuredWindow&) = delete;
  MeasuredWindow& operator=(const MeasuredWindow&) = delete;

  // Finds the sources (the GPUs of the selection, the process tree) without sampling yet, so a
  // GPU that is not there fails before the work to watch starts; begin() does it when not done.
  void prepare();
  void begin();  // starts the window once: a later call, or one after end(), does nothing
  void end();    // ends it (a sample is taken now); does nothing when not running
  bool began() const { return began_; }
  // The recording of the window, ended first if still running; nullopt when disabled or never
  // begun, and on every call after the first.
  std::optional<Recording> take();

 private:
  bool enabled_;
  pid_t root_;
  double interval_s_;
  std::shared_ptr<const nvml::Nvml> nvml_;
  GpuSelection selection_;
  bool began_ = false;
  std::unique_ptr<SourceSet> sources_;  // prepared, not yet sampling
  std::unique_ptr<Sampler> sampler_;
  std::vector<GpuIdentity> gpus_;
  std::string gpus_none_reason_;
  std::vector<std::string> notes_;  // the sources' own (a GPU NVML could not read, no cgroup)
};

}  // namespace dlbench::telemetry
