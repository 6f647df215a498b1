// One GPU's GPM metrics (Hopper and newer): SM activity and occupancy, tensor activity, DRAM
// bandwidth %, FP16/FP32/FP64 pipe activity, PCIe and NVLink rates. The driver computes each
// from two counter samples taken more than 100 ms apart; dlbench keeps a few recent samples,
// pairs each tick with the newest one old enough, and pairs the window's first and last
// samples for one whole-window figure per metric.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/nvml/nvml.h"
#include "bench/telemetry/source.h"

namespace dlbench::telemetry {

class GpmSource : public Source {
 public:
  GpmSource(std::shared_ptr<const nvml::Nvml> nvml, unsigned index, nvmlDevice_t device);
  ~GpmSource() override;
  GpmSource(const GpmSource&) = delete;
  GpmSource& operator=(const GpmSource&) = delete;

  const std::vector<MetricSpec>& metrics() const override { return metrics_; }
  void begin() override;
  void read(const Tick& tick, Readings& out) override;
  void end(Readings& window) override;

 private:
  struct Slot {
    nvmlGpmSample_t sample = nullptr;
    std::int64_t taken_ns = -1;  // CLOCK_MONOTONIC, -1 = empty
  };

  nvml::Status take(Slot& slot);
  void compute(const Slot& earlier, const Slot& later, Readings& out);

  std::shared_ptr<const nvml::Nvml> nvml_;
  nvmlDevice_t device_;
  std::vector<MetricSpec> metrics_;
  std::vector<unsigned> metric_ids_;
  std::vector<double> scales_;
  std::string unavailable_;  // why this GPU has no GPM, empty when it has
  Slot first_;
  std::vector<Slot> ring_;
  std::size_t latest_ = 0;
  std::unique_ptr<nvmlGpmMetricsGet_t> request_;
};

}  // namespace dlbench::telemetry
