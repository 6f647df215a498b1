// A stand-in libnvidia-ml.so for machines without a GPU: one "Fake GPU" with known readings,
// loaded by dlbench through DLBENCH_NVML_LIBRARY. It exercises every path of the NVML and GPM
// sources: the memory v1 fallback (v2 answers "version mismatch"), the power-average fallback
// (its field is "not supported"), the old clock-reason name (the new one is absent), per-field
// failures (NVLink), process matching (it lists dlbench's children), counters that grow with
// time, and GPM pairs that must be more than 100 ms apart. It checks the struct versions the
// real driver checks. It says nothing about the real driver's ABI: the gpu-labelled tests do.
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/nvml/nvml_api.h"

namespace {

nvmlDevice_t fake_device() {
  static int device;
  return reinterpret_cast<nvmlDevice_t>(&device);
}

double seconds_since_load() {
  static timespec start = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
  }();
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9;
}

struct GpmSample {
  double taken = -1;
};

// dlbench's children: the monitored command.
std::vector<unsigned> child_pids() {
  std::vector<unsigned> pids;
  std::string tasks = "/proc/" + std::to_string(getpid()) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return pids;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    FILE* f = std::fopen((tasks + "/" + e->d_name + "/children").c_str(), "r");
    if (f == nullptr) continue;
    for (unsigned pid; std::fscanf(f, "%u", &pid) == 1;) pids.push_back(pid);
    std::fclose(f);
  }
  closedir(dir);
  return pids;
}

}  // namespace

extern "C" {

constexpr double kPowerW = 250, kEnergyW = 300, kPcieBytesPerS = 1e9;
constexpr unsigned long long kProcessBytes = 1ull << 30;

nvmlReturn_t nvmlInit_v2() {
  seconds_since_load();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown() {
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t) {
  return "fake NVML error";
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (index != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *device = fake_device();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t, char* name, unsigned size) {
  std::snprintf(name, size, "Fake GPU");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t, char* uuid, unsigned size) {
  std::snprintf(uuid, size, "GPU-00000000-0000-0000-0000-000000000000");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t, nvmlPciInfo_t* pci) {
  *pci = nvmlPciInfo_t{};
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:65:00.0");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t, nvmlUtilization_t* u) {
  *u = {97, 40};
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t, nvmlMemory_v2_t*) {
  return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t* m) {
  *m = {80ull << 30, 60ull << 30, 20ull << 30};
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t, unsigned* count,
                                                     nvmlProcessInfo_t* infos) {
  std::vector<nvmlProcessInfo_t> list{{1, 5ull << 30, ~0u, ~0u}};  // someone else's
  for (unsigned pid : child_pids()) list.push_back({pid, kProcessBytes, ~0u, ~0u});
  bool fits = *count >= list.size();
  *count = static_cast<unsigned>(list.size());
  if (!fits) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(infos, list.data(), list.size() * sizeof(nvmlProcessInfo_t));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t, int count, nvmlFieldValue_t* values) {
  double t = seconds_since_load();
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.nvmlReturn = NVML_SUCCESS;
    switch (v.fieldId) {
      case NVML_FI_DEV_POWER_INSTANT:
        v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v.value.uiVal = static_cast<unsigned>(kPowerW * 1000);
        break;
      case NVML_FI_DEV_PCIE_COUNT_TX_BYTES:
      case NVML_FI_DEV_PCIE_COUNT_RX_BYTES:
        v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        v.value.ullVal = static_cast<unsigned long long>(kPcieBytesPerS * t);
        break;
      default:  // power average, NVLink: this fake GPU has neither
        v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t, unsigned* milliwatts) {
  *milliwatts = 240000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long* mj) {
  *mj = 1'000'000 + static_cast<unsigned long long>(kEnergyW * 1000 * seconds_since_load());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t, nvmlClockType_t type, unsigned* mhz) {
  *mhz = type == NVML_CLOCK_SM ? 1980 : 2619;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned* c) {
  *c = 55;
  return NVML_SUCCESS;
}
// Only the pre-R535 name: dlbench must fall back to it.
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t, unsigned long long* r) {
  *r = NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t, nvmlGpmSupport_t* support) {
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  *sample = reinterpret_cast<nvmlGpmSample_t>(new GpmSample);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  delete reinterpret_cast<GpmSample*>(sample);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t, nvmlGpmSample_t sample) {
  reinterpret_cast<GpmSample*>(sample)->taken = seconds_since_load();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  if (get->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  auto* a = reinterpret_cast<GpmSample*>(get->sample1);
  auto* b = reinterpret_cast<GpmSample*>(get->sample2);
  // The driver's rule: two samples, the second later, more than 100 ms apart.
  if (a == nullptr || b == nullptr || a->taken < 0 || b->taken - a->taken < 0.1)
    return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    nvmlGpmMetric_t& m = get->metrics[i];
    m.nvmlReturn = NVML_SUCCESS;
    switch (m.metricId) {
      case NVML_GPM_METRIC_SM_UTIL:
        m.value = 91;
        break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
        m.value = 60;
        break;
      case NVML_GPM_METRIC_PCIE_TX_PER_SEC:
        m.value = 100;  // MiB/s
        break;
      case NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
      case NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC:
        m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      default:
        m.value = 10;
    }
  }
  return NVML_SUCCESS;
}

}  // extern "C"
