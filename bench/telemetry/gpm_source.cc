#include "bench/telemetry/gpm_source.h"

#include <time.h>

#include "bench/telemetry/nvml_source.h"

namespace dlbench::telemetry {
namespace {

// The driver's counters refresh about every 100 ms: a pair closer than that is noise.
constexpr std::int64_t kMinPairNs = 100'000'000;
// Enough recent samples that one is old enough at the shortest interval (0.1 s, with jitter).
constexpr std::size_t kRingSlots = 3;
constexpr double kMiB = 1024.0 * 1024.0;

struct GpmMetricDef {
  unsigned id;
  const char* name;
  const char* label;
  const char* unit;
  double scale;  // to unit
};

const GpmMetricDef kGpmMetrics[] = {
    {NVML_GPM_METRIC_SM_UTIL, "sm_active", "SM activity: SMs with a warp assigned (GPM)", "%", 1},
    {NVML_GPM_METRIC_SM_OCCUPANCY, "sm_occupancy", "SM occupancy: resident warps vs max (GPM)", "%",
     1},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, "tensor_active", "tensor-core activity, any type (GPM)", "%",
     1},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, "dram_active", "DRAM bandwidth, % of peak (GPM)", "%", 1},
    {NVML_GPM_METRIC_FP64_UTIL, "fp64_active", "FP64 pipe activity, non-tensor (GPM)", "%", 1},
    {NVML_GPM_METRIC_FP32_UTIL, "fp32_active", "FP32 pipe activity, non-tensor (GPM)", "%", 1},
    {NVML_GPM_METRIC_FP16_UTIL, "fp16_active", "FP16 pipe activity, non-tensor (GPM)", "%", 1},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, "pcie_tx_gpm", "PCIe bytes sent per second (GPM)", "B/s",
     kMiB},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, "pcie_rx_gpm", "PCIe bytes received per second (GPM)", "B/s",
     kMiB},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlink_tx_gpm", "NVLink bytes sent per second (GPM)",
     "B/s", kMiB},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlink_rx_gpm",
     "NVLink bytes received per second (GPM)", "B/s", kMiB},
};

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

GpmSource::GpmSource(std::shared_ptr<const nvml::Nvml> nvml, unsigned index, nvmlDevice_t device)
    : nvml_(std::move(nvml)), device_(device), ring_(kRingSlots) {
  for (const GpmMetricDef& def : kGpmMetrics) {
    metrics_.push_back(interval_metric(gpu_prefix(index) + def.name, def.label, def.unit));
    metric_ids_.push_back(def.id);
    scales_.push_back(def.scale);
  }
  const nvml::Nvml& n = *nvml_;
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  nvml::Status st = DLBENCH_NVML(n, nvmlGpmQueryDeviceSupport, device_, &support);
  if (!st.ok()) {
    unavailable_ = "GPM: " + st.reason;
    return;
  }
  if (!support.isSupportedDevice) {
    unavailable_ = "GPM is not supported on this GPU (it needs Hopper or newer)";
    return;
  }
  for (std::size_t i = 0; i <= ring_.size(); ++i) {
    Slot& slot = i == 0 ? first_ : ring_[i - 1];
    st = DLBENCH_NVML(n, nvmlGpmSampleAlloc, &slot.sample);
    if (!st.ok()) {
      unavailable_ = "GPM sample buffers could not be allocated: " + st.reason;
      return;
    }
  }
  request_ = std::make_unique<nvmlGpmMetricsGet_t>();
}

GpmSource::~GpmSource() {
  if (nvml_->api().nvmlGpmSampleFree == nullptr) return;
  if (first_.sample != nullptr) nvml_->api().nvmlGpmSampleFree(first_.sample);
  for (Slot& slot : ring_)
    if (slot.sample != nullptr) nvml_->api().nvmlGpmSampleFree(slot.sample);
}

nvml::Status GpmSource::take(Slot& slot) {
  nvml::Status st = DLBENCH_NVML(*nvml_, nvmlGpmSampleGet, device_, slot.sample);
  slot.taken_ns = st.ok() ? monotonic_ns() : -1;
  return st;
}

void GpmSource::begin() {
  if (!unavailable_.empty()) return;
  for (Slot& slot : ring_) slot.taken_ns = -1;
  take(first_);
}

void GpmSource::compute(const Slot& earlier, const Slot& later, Readings& out) {
  nvmlGpmMetricsGet_t& request = *request_;
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.numMetrics = static_cast<unsigned>(metric_ids_.size());
  request.sample1 = earlier.sample;
  request.sample2 = later.sample;
  for (std::size_t m = 0; m < metric_ids_.size(); ++m) {
    request.metrics[m] = nvmlGpmMetric_t{};
    request.metrics[m].metricId = metric_ids_[m];
  }
  nvml::Status st = DLBENCH_NVML(*nvml_, nvmlGpmMetricsGet, &request);
  for (std::size_t m = 0; m < metric_ids_.size(); ++m) {
    nvmlReturn_t rc = st.ok() ? request.metrics[m].nvmlReturn : st.code;
    if (rc == NVML_SUCCESS)
      out.set(m, request.metrics[m].value * scales_[m]);
    else
      out.missing(m, "GPM: " + (st.ok() ? nvml_->describe(rc) : st.reason));
  }
}

void GpmSource::read(const Tick&, Readings& out) {
  if (!unavailable_.empty()) {
    for (std::size_t m = 0; m < metrics_.size(); ++m) out.missing(m, unavailable_);
    return;
  }
  std::size_t slot = (latest_ + 1) % ring_.size();
  nvml::Status st = take(ring_[slot]);
  if (!st.ok()) {
    for (std::size_t m = 0; m < metrics_.size(); ++m) out.missing(m, "GPM: " + st.reason);
    return;
  }
  latest_ = slot;
  // The newest earlier sample that is old enough: usually the previous tick's.
  const Slot* earlier = nullptr;
  std::int64_t newest_allowed = ring_[slot].taken_ns - kMinPairNs;
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    const Slot& s = ring_[i];
    if (i == slot || s.taken_ns < 0 || s.taken_ns > newest_allowed) continue;
    if (earlier == nullptr || s.taken_ns > earlier->taken_ns) earlier = &s;
  }
  if (earlier == nullptr && first_.taken_ns >= 0 && first_.taken_ns <= newest_allowed)
    earlier = &first_;
  if (earlier == nullptr) {
    for (std::size_t m = 0; m < metrics_.size(); ++m)
      out.missing(m, "GPM needs two samples more than 100 ms apart; this is the first");
    return;
  }
  compute(*earlier, ring_[slot], out);
}

void GpmSource::end(Readings& window) {
  if (!unavailable_.empty() || first_.taken_ns < 0) return;
  const Slot& last = ring_[latest_];
  if (last.taken_ns - first_.taken_ns < kMinPairNs) return;
  compute(first_, last, window);
}

}  // namespace dlbench::telemetry
