#include "bench/sysinfo/gpu_info.h"

#include <cctype>
#include <cstdio>

#include "bench/nvml/nvml.h"

namespace dlbench::sysinfo {
namespace {

using nvml::Nvml;
using nvml::Status;

using nvml::reported;

GpuInfo query_nvml_device(const Nvml& nvml, unsigned index) {
  GpuInfo gpu;
  gpu.nvml_index = Reported<int>::of(static_cast<int>(index));
  nvmlDevice_t dev = nullptr;
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetHandleByIndex_v2, index, &dev);
  if (!st.ok()) {
    gpu.name = "GPU " + std::to_string(index) + " (" + st.reason + ")";
    return gpu;
  }
  char text[nvml::kStringBufferSize] = {};
  if (DLBENCH_NVML(nvml, nvmlDeviceGetName, dev, text, sizeof text).ok()) gpu.name = text;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetUUID, dev, text, sizeof text);
  gpu.uuid = reported<std::string>(st, text);

  nvmlPciInfo_t pci{};
  st = DLBENCH_NVML(nvml, nvmlDeviceGetPciInfo_v3, dev, &pci);
  gpu.pci_bus_id = reported<std::string>(st, normalize_pci_bus_id(pci.busId));

  int major = 0, minor = 0;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetCudaComputeCapability, dev, &major, &minor);
  gpu.compute_capability =
      reported<std::string>(st, std::to_string(major) + "." + std::to_string(minor));

  nvmlMemory_v2_t mem2{};
  mem2.version = nvml::kNvmlMemoryV2;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMemoryInfo_v2, dev, &mem2);
  if (st.ok()) {
    gpu.memory_bytes = Reported<std::uint64_t>::of(mem2.total);
  } else {
    nvmlMemory_t mem1{};
    st = DLBENCH_NVML(nvml, nvmlDeviceGetMemoryInfo, dev, &mem1);
    gpu.memory_bytes = reported<std::uint64_t>(st, mem1.total);
  }

  unsigned value = 0;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxClockInfo, dev, NVML_CLOCK_SM, &value);
  gpu.max_sm_clock_mhz = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxClockInfo, dev, NVML_CLOCK_MEM, &value);
  gpu.max_memory_clock_mhz = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMemoryBusWidth, dev, &value);
  gpu.memory_bus_width_bits = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxPcieLinkGeneration, dev, &value);
  gpu.pcie_generation_max = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxPcieLinkWidth, dev, &value);
  gpu.pcie_width_max = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetCurrPcieLinkGeneration, dev, &value);
  gpu.pcie_generation_current = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetCurrPcieLinkWidth, dev, &value);
  gpu.pcie_width_current = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetPowerManagementLimit, dev, &value);
  gpu.power_limit_w = reported(st, value / 1000.0);

  // A GPU without NVLink answers NOT_SUPPORTED for link 0; count only links that are up.
  int links = 0;
  Status first_link;
  for (unsigned link = 0; link < nvml::kMaxNvLinks; ++link) {
    nvmlEnableState_t state = NVML_FEATURE_DISABLED;
    st = DLBENCH_NVML(nvml, nvmlDeviceGetNvLinkState, dev, link, &state);
    if (link == 0) first_link = st;
    if (!st.ok()) break;
    if (state == NVML_FEATURE_ENABLED) ++links;
  }
  if (first_link.ok())
    gpu.nvlink_links_active = Reported<int>::of(links);
  else if (first_link.code == NVML_ERROR_NOT_SUPPORTED)
    gpu.nvlink_links_active = Reported<int>::of(0);
  else
    gpu.nvlink_links_active = Reported<int>::missing(first_link.reason);

  nvmlEnableState_t current = NVML_FEATURE_DISABLED, pending = NVML_FEATURE_DISABLED;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetEccMode, dev, &current, &pending);
  gpu.ecc_enabled = reported(st, current == NVML_FEATURE_ENABLED);
  unsigned mig_current = 0, mig_pending = 0;
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMigMode, dev, &mig_current, &mig_pending);
  gpu.mig_enabled = reported(st, mig_current == 1);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetPersistenceMode, dev, &current);
  gpu.persistence_enabled = reported(st, current == NVML_FEATURE_ENABLED);
  return gpu;
}

GpuSoftware query_nvml_software(const Nvml& nvml) {
  GpuSoftware sw;
  char text[nvml::kStringBufferSize] = {};
  Status st = DLBENCH_NVML(nvml, nvmlSystemGetDriverVersion, text, sizeof text);
  sw.driver_version = reported<std::string>(st, text);
  st = DLBENCH_NVML(nvml, nvmlSystemGetNVMLVersion, text, sizeof text);
  sw.nvml_version = reported<std::string>(st, text);
  int cuda = 0;
  st = DLBENCH_NVML(nvml, nvmlSystemGetCudaDriverVersion_v2, &cuda);
  sw.cuda_driver_api = reported(st, cuda_version_string(cuda));
  return sw;
}

// A GPU that only the CUDA runtime sees: every NVML-only field says why it is missing.
GpuInfo gpu_without_nvml(const std::string& why) {
  GpuInfo gpu;
  gpu.nvml_index = Reported<int>::missing(why);
  gpu.uuid = gpu.pci_bus_id = gpu.compute_capability = Reported<std::string>::missing(why);
  gpu.memory_bytes = Reported<std::uint64_t>::missing(why);
  gpu.max_sm_clock_mhz = gpu.max_memory_clock_mhz = gpu.memory_bus_width_bits =
      gpu.pcie_generation_max = gpu.pcie_width_max = gpu.pcie_generation_current =
          gpu.pcie_width_current = Reported<unsigned>::missing(why);
  gpu.nvlink_links_active = Reported<int>::missing(why);
  gpu.power_limit_w = Reported<double>::missing(why);
  gpu.ecc_enabled = gpu.mig_enabled = gpu.persistence_enabled = Reported<bool>::missing(why);
  return gpu;
}

// Fills what NVML does not know (SM count, L2) or did not answer from the CUDA runtime.
void merge_cuda(GpuInfo& gpu, const CudaDevice& d) {
  gpu.cuda_index = Reported<int>::of(d.index);
  if (gpu.name.empty()) gpu.name = d.name;
  if (!gpu.uuid.available()) gpu.uuid = Reported<std::string>::of(d.uuid);
  if (!gpu.pci_bus_id.available()) gpu.pci_bus_id = Reported<std::string>::of(d.pci_bus_id);
  if (!gpu.compute_capability.available())
    gpu.compute_capability =
        Reported<std::string>::of(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  gpu.sm_count = Reported<int>::of(d.sm_count);
  gpu.l2_cache_bytes = Reported<std::uint64_t>::of(d.l2_cache_bytes);
  if (!gpu.memory_bytes.available()) gpu.memory_bytes = Reported<std::uint64_t>::of(d.memory_bytes);
  if (!gpu.max_memory_clock_mhz.available() && d.memory_clock_mhz > 0)
    gpu.max_memory_clock_mhz = Reported<unsigned>::of(d.memory_clock_mhz);
  if (!gpu.max_sm_clock_mhz.available() && d.sm_clock_mhz > 0)
    gpu.max_sm_clock_mhz = Reported<unsigned>::of(d.sm_clock_mhz);
  if (!gpu.memory_bus_width_bits.available() && d.memory_bus_width_bits > 0)
    gpu.memory_bus_width_bits = Reported<unsigned>::of(d.memory_bus_width_bits);
}

bool same_device(const GpuInfo& gpu, const CudaDevice& d) {
  if (gpu.uuid.available() && !d.uuid.empty()) return gpu.uuid.value() == d.uuid;
  if (gpu.pci_bus_id.available() && !d.pci_bus_id.empty())
    return gpu.pci_bus_id.value() == normalize_pci_bus_id(d.pci_bus_id);
  return false;
}

}  // namespace

double theoretical_bandwidth_gb_per_s(unsigned memory_clock_mhz, unsigned bus_width_bits) {
  // Double data rate: NVML's memory clock times two transfers per clock, for HBM and GDDR.
  return 2.0 * memory_clock_mhz * 1e6 * (bus_width_bits / 8.0) / 1e9;
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string packed_version_string(std::size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." +
         std::to_string(version % 100);
}

std::string normalize_pci_bus_id(const std::string& id) {
  // Domain is 8 hex digits in NVML and 4 in CUDA; keep the last 4, lower case.
  std::string lower;
  for (char c : id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = lower.find(':');
  if (colon == std::string::npos || colon < 4) return lower;
  return lower.substr(colon - 4);
}

GpuReport query_gpus(const nvml::Nvml& nvml) {
  GpuReport report;
  CudaQuery cuda = query_cuda();
  if (nvml.loaded()) {
    report.software = query_nvml_software(nvml);
    unsigned count = 0;
    Status st = DLBENCH_NVML(nvml, nvmlDeviceGetCount_v2, &count);
    if (!st.ok()) report.none_reason = "NVML could not count GPUs: " + st.reason;
    for (unsigned i = 0; st.ok() && i < count; ++i)
      report.gpus.push_back(query_nvml_device(nvml, i));
  } else {
    const std::string& why = nvml.why_unavailable();
    report.software.driver_version = Reported<std::string>::missing(why);
    report.software.nvml_version = Reported<std::string>::missing(why);
    report.software.cuda_driver_api = cuda.driver_api_version;
  }
  for (const CudaDevice& d : cuda.devices) {
    bool matched = false;
    for (GpuInfo& gpu : report.gpus) {
      if (same_device(gpu, d)) {
        merge_cuda(gpu, d);
        matched = true;
        break;
      }
    }
    if (!matched) {  // CUDA sees a GPU that NVML does not list (or NVML is missing)
      GpuInfo gpu = gpu_without_nvml(nvml.loaded() ? "not listed by NVML" : nvml.why_unavailable());
      merge_cuda(gpu, d);
      report.gpus.push_back(gpu);
    }
  }
  std::string no_cuda = cuda.unavailable_reason.empty()
                            ? "CUDA does not see this GPU (CUDA_VISIBLE_DEVICES?)"
                            : cuda.unavailable_reason;
  for (GpuInfo& gpu : report.gpus) {
    if (!gpu.cuda_index.available()) {
      gpu.cuda_index = Reported<int>::missing(no_cuda);
      gpu.sm_count = Reported<int>::missing(no_cuda);
      gpu.l2_cache_bytes = Reported<std::uint64_t>::missing(no_cuda);
    }
    if (gpu.max_memory_clock_mhz.available() && gpu.memory_bus_width_bits.available()) {
      gpu.memory_bandwidth_gb_per_s = Reported<double>::of(theoretical_bandwidth_gb_per_s(
          gpu.max_memory_clock_mhz.value(), gpu.memory_bus_width_bits.value()));
    } else {
      gpu.memory_bandwidth_gb_per_s =
          Reported<double>::missing("needs the memory clock and bus width");
    }
  }
  report.software.cuda_runtime = cuda.runtime_version;
  report.software.cudnn = cuda.cudnn;
  report.software.cublas = cuda.cublas;
  report.software.nccl = cuda.nccl;
  if (!report.software.cuda_driver_api.available() && cuda.driver_api_version.available())
    report.software.cuda_driver_api = cuda.driver_api_version;
  if (report.gpus.empty() && report.none_reason.empty()) {
    report.none_reason =
        nvml.loaded() ? "the NVIDIA driver reports no GPUs" : nvml.why_unavailable();
  }
  return report;
}

}  // namespace dlbench::sysinfo
