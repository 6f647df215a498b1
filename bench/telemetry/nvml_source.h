// One GPU through NVML (loaded at run time): kernel-busy and memory-busy %, memory used and
// total, our process tree's GPU memory, power (instant and averaged), energy, clocks,
// temperature, clock-event reasons, PCIe and NVLink byte counters. A metric that the GPU or
// driver does not provide says why (not supported, no permission, function not found); once a
// call answers "not supported" or "not found" it is not made again.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/nvml/nvml.h"
#include "bench/telemetry/process_tree.h"
#include "bench/telemetry/source.h"
#include "engine/core/reported.h"

namespace dlbench::telemetry {

struct GpuIdentity {
  unsigned index = 0;  // NVML's index
  std::string name;
  Reported<std::string> uuid;
  Reported<std::string> pci_bus_id;  // "0000:65:00.0"
};

// NVML's calls for one device, read into one identity; prefix "gpu<index>." for metric names.
GpuIdentity query_gpu_identity(const nvml::Nvml& nvml, unsigned index, nvmlDevice_t device);
std::string gpu_prefix(unsigned index);

class NvmlGpuSource : public Source {
 public:
  NvmlGpuSource(std::shared_ptr<const nvml::Nvml> nvml, unsigned index, nvmlDevice_t device,
                std::shared_ptr<ProcessTree> tree);

  const std::vector<MetricSpec>& metrics() const override { return metrics_; }
  void read(const Tick& tick, Readings& out) override;
  std::vector<std::string> notes() const override;

 private:
  // One entry of the per-tick nvmlDeviceGetFieldValues batch.
  struct Field {
    unsigned id = 0;
    unsigned scope = 0;
    std::size_t metric = 0;
    double scale = 1;  // to the metric's unit
  };

  void record(Readings& out, std::size_t metric, const nvml::Status& status, double value);
  void read_unsigned(Readings& out, std::size_t metric,
                     const std::function<nvml::Status(unsigned*)>& call);
  void read_memory(Readings& out);
  void read_process_memory(const Tick& tick, Readings& out);
  void read_fields(Readings& out);
  void read_clock_events(Readings& out);

  std::shared_ptr<const nvml::Nvml> nvml_;
  nvmlDevice_t device_;
  std::shared_ptr<ProcessTree> tree_;
  std::string prefix_;
  std::vector<MetricSpec> metrics_;
  std::vector<std::string> permanent_;  // per metric: why it is never available, or empty
  static constexpr std::int64_t kEnergyPeriodNs = 1'000'000'000;
  std::int64_t last_energy_ns_ = 0;
  std::vector<Field> fields_;
  std::vector<nvmlFieldValue_t> field_values_;
  std::vector<nvmlProcessInfo_t> processes_;
  bool memory_v1_ = false;             // nvmlDeviceGetMemoryInfo_v2 unavailable
  bool power_usage_fallback_ = false;  // power average from nvmlDeviceGetPowerUsage
  bool throttle_reasons_ = false;      // pre-R535 name of the clock-event call
  std::string pid_namespace_reason_;   // set when in a PID namespace (see read_process_memory)
};

}  // namespace dlbench::telemetry
