#include "bench/telemetry/nvml_source.h"

#include <climits>
#include <functional>
#include <optional>
#include <sstream>
#include <unordered_set>

#include "bench/sysinfo/gpu_info.h"
#include "bench/telemetry/proc_file.h"

namespace dlbench::telemetry {
namespace {

using nvml::Status;

enum GpuMetric : std::size_t {
  kKernelBusy,
  kMemoryBusy,
  kMemoryUsed,
  kMemoryTotal,
  kProcessMemory,
  kPower,
  kPowerAverage,
  kEnergy,
  kSmClock,
  kMemoryClock,
  kTemperature,
  kClockEvents,
  kPcieTx,
  kPcieRx,
  kNvlinkTx,
  kNvlinkRx,
};

constexpr double kMilli = 1e-3;
constexpr double kKiB = 1024.0;
constexpr std::size_t kInitialProcessSlots = 64;

// Answers that will not change while we sample: stop asking.
bool permanent(nvmlReturn_t code) {
  return code == NVML_ERROR_NOT_SUPPORTED || code == NVML_ERROR_FUNCTION_NOT_FOUND ||
         code == NVML_ERROR_NO_PERMISSION || code == NVML_ERROR_UNINITIALIZED;
}

std::optional<double> field_as_double(const nvmlFieldValue_t& f) {
  switch (f.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return f.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return static_cast<double>(f.value.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(f.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(f.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(f.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return static_cast<double>(f.value.siVal);
  }
  return std::nullopt;
}

// In a PID namespace (a container) some drivers report host PIDs, which match none of ours.
std::string pid_namespace_reason() {
  std::string status;
  if (!read_small_file("/proc/self/status", status)) return {};
  auto at = status.find("NSpid:");
  if (at == std::string::npos) return {};
  auto end = status.find('\n', at);
  std::istringstream ids(status.substr(at + 6, end - at - 6));
  int levels = 0;
  for (std::string id; ids >> id;) ++levels;
  if (levels <= 1) return {};
  return "dlbench runs in a PID namespace (a container) and NVML's process PIDs match none of "
         "the monitored ones (host PIDs?)";
}

}  // namespace

std::string gpu_prefix(unsigned index) {
  return "gpu" + std::to_string(index) + ".";
}

GpuIdentity query_gpu_identity(const nvml::Nvml& nvml, unsigned index, nvmlDevice_t device) {
  GpuIdentity id;
  id.index = index;
  char text[nvml::kStringBufferSize] = {};
  id.name = DLBENCH_NVML(nvml, nvmlDeviceGetName, device, text, sizeof text).ok()
                ? text
                : "GPU " + std::to_string(index);
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetUUID, device, text, sizeof text);
  id.uuid = st.ok() ? Reported<std::string>::of(text) : Reported<std::string>::missing(st.reason);
  nvmlPciInfo_t pci{};
  st = DLBENCH_NVML(nvml, nvmlDeviceGetPciInfo_v3, device, &pci);
  id.pci_bus_id = st.ok() ? Reported<std::string>::of(sysinfo::normalize_pci_bus_id(pci.busId))
                          : Reported<std::string>::missing(st.reason);
  return id;
}

NvmlGpuSource::NvmlGpuSource(std::shared_ptr<const nvml::Nvml> nvml, unsigned index,
                             nvmlDevice_t device, std::shared_ptr<ProcessTree> tree)
    : nvml_(std::move(nvml)),
      device_(device),
      tree_(std::move(tree)),
      prefix_(gpu_prefix(index)),
      processes_(kInitialProcessSlots),
      pid_namespace_reason_(pid_namespace_reason()) {
  const std::string& p = prefix_;
  metrics_ = {
      interval_metric(p + "kernel_busy",
                      "kernel busy: time at least one kernel ran (not how much of the GPU)", "%"),
      interval_metric(p + "memory_busy", "memory busy: time device memory was read or written",
                      "%"),
      level_metric(p + "memory_used", "device memory in use, all processes", "B"),
      level_metric(p + "memory_total", "device memory", "B"),
      level_metric(p + "process_memory", "device memory of the monitored process tree", "B"),
      level_metric(p + "power", "board power, instantaneous", "W"),
      level_metric(p + "power_average", "board power, averaged over the last second", "W"),
      counter_metric(p + "energy", "energy counter, differenced: mean power over the window", "W",
                     "J", 1.0),
      level_metric(p + "sm_clock", "SM clock", "MHz"),
      level_metric(p + "memory_clock", "memory clock", "MHz"),
      level_metric(p + "temperature", "GPU temperature", "C"),
      bitmask_metric(
          p + "clock_events", "clock-event (throttle) reasons, ORed over the window",
          {"gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown", "sync_boost",
           "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake", "display_clock"}),
      counter_metric(p + "pcie_tx", "PCIe bytes sent by the GPU", "B/s", "B", 1.0),
      counter_metric(p + "pcie_rx", "PCIe bytes received by the GPU", "B/s", "B", 1.0),
      counter_metric(p + "nvlink_tx", "NVLink data bytes sent, all links", "B/s", "B", 1.0),
      counter_metric(p + "nvlink_rx", "NVLink data bytes received, all links", "B/s", "B", 1.0),
  };
  permanent_.assign(metrics_.size(), std::string());
  fields_ = {
      {NVML_FI_DEV_POWER_INSTANT, 0, kPower, kMilli},
      {NVML_FI_DEV_POWER_AVERAGE, 0, kPowerAverage, kMilli},
      {NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0, kPcieTx, 1.0},
      {NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0, kPcieRx, 1.0},
      {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, UINT_MAX, kNvlinkTx, kKiB},
      {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, UINT_MAX, kNvlinkRx, kKiB},
  };
}

std::vector<std::string> NvmlGpuSource::notes() const {
  std::vector<std::string> notes;
  if (power_usage_fallback_)
    notes.push_back(prefix_ +
                    "power_average comes from nvmlDeviceGetPowerUsage (the field value "
                    "is not supported by this driver)");
  if (memory_v1_)
    notes.push_back(prefix_ +
                    "memory_used comes from nvmlDeviceGetMemoryInfo v1 (it includes "
                    "the driver's reserved memory)");
  return notes;
}

void NvmlGpuSource::record(Readings& out, std::size_t metric, const Status& status, double value) {
  if (status.ok()) {
    out.set(metric, value);
    return;
  }
  if (permanent(status.code)) permanent_[metric] = status.reason;
  out.missing(metric, status.reason);
}

void NvmlGpuSource::read(const Tick& tick, Readings& out) {
  const nvml::Nvml& nvml = *nvml_;
  nvmlUtilization_t util{};
  if (permanent_[kKernelBusy].empty()) {
    Status st = DLBENCH_NVML(nvml, nvmlDeviceGetUtilizationRates, device_, &util);
    record(out, kKernelBusy, st, util.gpu);
    record(out, kMemoryBusy, st, util.memory);
  }
  read_memory(out);
  read_process_memory(tick, out);
  read_fields(out);
  // Each call completes before its value is read (argument order is unspecified in C++).
  // The energy counter is costly (see Tick::window_edge): read at the window's edges and at
  // most once per kEnergyPeriodNs between; the summary differences consecutive readings.
  if (permanent_[kEnergy].empty() &&
      (tick.window_edge || tick.monotonic_ns - last_energy_ns_ >= kEnergyPeriodNs)) {
    last_energy_ns_ = tick.monotonic_ns;
    unsigned long long energy_mj = 0;
    Status st = DLBENCH_NVML(nvml, nvmlDeviceGetTotalEnergyConsumption, device_, &energy_mj);
    record(out, kEnergy, st, static_cast<double>(energy_mj) * kMilli);
  }
  read_unsigned(out, kSmClock, [&](unsigned* v) {
    return DLBENCH_NVML(nvml, nvmlDeviceGetClockInfo, device_, NVML_CLOCK_SM, v);
  });
  read_unsigned(out, kMemoryClock, [&](unsigned* v) {
    return DLBENCH_NVML(nvml, nvmlDeviceGetClockInfo, device_, NVML_CLOCK_MEM, v);
  });
  read_unsigned(out, kTemperature, [&](unsigned* v) {
    return DLBENCH_NVML(nvml, nvmlDeviceGetTemperature, device_, NVML_TEMPERATURE_GPU, v);
  });
  read_clock_events(out);
  for (std::size_t m = 0; m < metrics_.size(); ++m)
    if (!permanent_[m].empty()) out.missing(m, permanent_[m]);
}

void NvmlGpuSource::read_unsigned(Readings& out, std::size_t metric,
                                  const std::function<Status(unsigned*)>& call) {
  if (!permanent_[metric].empty()) return;
  unsigned value = 0;
  Status st = call(&value);
  record(out, metric, st, value);
}

void NvmlGpuSource::read_memory(Readings& out) {
  const nvml::Nvml& nvml = *nvml_;
  if (!memory_v1_) {
    nvmlMemory_v2_t memory{};
    memory.version = nvml::kNvmlMemoryV2;
    Status st = DLBENCH_NVML(nvml, nvmlDeviceGetMemoryInfo_v2, device_, &memory);
    if (st.ok()) {
      out.set(kMemoryUsed, static_cast<double>(memory.used));
      out.set(kMemoryTotal, static_cast<double>(memory.total));
      return;
    }
    if (!permanent(st.code) && st.code != NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
      out.missing(kMemoryUsed, st.reason);
      out.missing(kMemoryTotal, st.reason);
      return;
    }
    memory_v1_ = true;
  }
  nvmlMemory_t memory{};
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetMemoryInfo, device_, &memory);
  record(out, kMemoryUsed, st, static_cast<double>(memory.used));
  record(out, kMemoryTotal, st, static_cast<double>(memory.total));
}

void NvmlGpuSource::read_process_memory(const Tick& tick, Readings& out) {
  if (!permanent_[kProcessMemory].empty()) return;
  const std::vector<ProcStat>& tree = tree_->at(tick);
  if (tree.empty()) {
    out.missing(kProcessMemory, "the monitored process tree has exited");
    return;
  }
  unsigned count = static_cast<unsigned>(processes_.size());
  Status st = DLBENCH_NVML(*nvml_, nvmlDeviceGetComputeRunningProcesses_v3, device_, &count,
                           processes_.data());
  if (st.code == NVML_ERROR_INSUFFICIENT_SIZE) {
    processes_.resize(count + kInitialProcessSlots);
    count = static_cast<unsigned>(processes_.size());
    st = DLBENCH_NVML(*nvml_, nvmlDeviceGetComputeRunningProcesses_v3, device_, &count,
                      processes_.data());
  }
  if (!st.ok()) {
    record(out, kProcessMemory, st, 0);
    return;
  }
  std::unordered_set<pid_t> ours;
  for (const ProcStat& p : tree) ours.insert(p.pid);
  double bytes = 0;
  unsigned matched = 0;
  for (unsigned i = 0; i < count && i < processes_.size(); ++i) {
    if (!ours.count(static_cast<pid_t>(processes_[i].pid))) continue;
    ++matched;
    if (processes_[i].usedGpuMemory == nvml::kValueNotAvailable) {
      out.missing(kProcessMemory, "the driver does not report per-process GPU memory here");
      return;
    }
    bytes += static_cast<double>(processes_[i].usedGpuMemory);
  }
  // Some drivers list host PIDs inside a container; then "none of ours" would be a lie.
  if (matched == 0 && count > 0 && !pid_namespace_reason_.empty()) {
    out.missing(kProcessMemory, pid_namespace_reason_);
    return;
  }
  out.set(kProcessMemory, bytes);
}

void NvmlGpuSource::read_fields(Readings& out) {
  if (!fields_.empty()) {
    field_values_.assign(fields_.size(), nvmlFieldValue_t{});
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      field_values_[i].fieldId = fields_[i].id;
      field_values_[i].scopeId = fields_[i].scope;
    }
    Status st = DLBENCH_NVML(*nvml_, nvmlDeviceGetFieldValues, device_,
                             static_cast<int>(field_values_.size()), field_values_.data());
    std::vector<Field> keep;
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      const Field& f = fields_[i];
      const nvmlFieldValue_t& v = field_values_[i];
      Status one = st.ok() && v.nvmlReturn != NVML_SUCCESS
                       ? Status{v.nvmlReturn, nvml_->describe(v.nvmlReturn)}
                       : st;
      std::optional<double> value = one.ok() ? field_as_double(v) : std::nullopt;
      if (one.ok() && !value) one = {NVML_ERROR_NOT_SUPPORTED, "unknown NVML value type"};
      record(out, f.metric, one, value.value_or(0) * f.scale);
      if (permanent_[f.metric].empty()) keep.push_back(f);
    }
    fields_ = std::move(keep);
  }
  // Drivers without the averaged-power field still answer the classic power call, which is
  // itself averaged over one second on Ampere and newer.
  if (!permanent_[kPowerAverage].empty() && !power_usage_fallback_ &&
      nvml_->api().nvmlDeviceGetPowerUsage != nullptr) {
    power_usage_fallback_ = true;
    permanent_[kPowerAverage].clear();
  }
  if (power_usage_fallback_) {
    unsigned milliwatts = 0;
    Status st = DLBENCH_NVML(*nvml_, nvmlDeviceGetPowerUsage, device_, &milliwatts);
    record(out, kPowerAverage, st, milliwatts * kMilli);
  }
}

void NvmlGpuSource::read_clock_events(Readings& out) {
  if (!permanent_[kClockEvents].empty()) return;
  unsigned long long reasons = 0;
  Status st;
  if (!throttle_reasons_) {
    st = DLBENCH_NVML(*nvml_, nvmlDeviceGetCurrentClocksEventReasons, device_, &reasons);
    if (st.code == NVML_ERROR_FUNCTION_NOT_FOUND) throttle_reasons_ = true;
  }
  if (throttle_reasons_)
    st = DLBENCH_NVML(*nvml_, nvmlDeviceGetCurrentClocksThrottleReasons, device_, &reasons);
  record(out, kClockEvents, st, static_cast<double>(reasons));
}

}  // namespace dlbench::telemetry
