// GPUs and the GPU software stack, from NVML (loaded at run time) and, in CUDA builds, the
// CUDA runtime. NVML and CUDA number devices differently (CUDA_VISIBLE_DEVICES, ordering),
// so the two are matched by UUID, then by PCI bus id, never by index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/reported.h"

namespace dlbench::nvml {
class Nvml;
}

namespace dlbench::sysinfo {

struct GpuInfo {
  Reported<int> nvml_index;
  Reported<int> cuda_index;  // missing when CUDA does not see this GPU
  std::string name;
  Reported<std::string> uuid;                // "GPU-xxxxxxxx-..."
  Reported<std::string> pci_bus_id;          // "0000:65:00.0"
  Reported<std::string> compute_capability;  // "9.0"
  Reported<int> sm_count;
  Reported<std::uint64_t> memory_bytes;
  Reported<std::uint64_t> l2_cache_bytes;
  Reported<unsigned> max_sm_clock_mhz;
  Reported<unsigned> max_memory_clock_mhz;
  Reported<unsigned> memory_bus_width_bits;
  // 2 transfers per clock × clock × bus width: the datasheet peak, not a measurement.
  Reported<double> memory_bandwidth_gb_per_s;
  Reported<unsigned> pcie_generation_max;
  Reported<unsigned> pcie_width_max;
  Reported<unsigned> pcie_generation_current;
  Reported<unsigned> pcie_width_current;
  Reported<int> nvlink_links_active;
  Reported<double> power_limit_w;
  Reported<bool> ecc_enabled;
  Reported<bool> mig_enabled;
  Reported<bool> persistence_enabled;
};

struct GpuSoftware {
  Reported<std::string> driver_version;
  Reported<std::string> nvml_version;
  Reported<std::string> cuda_driver_api;  // highest CUDA version the driver supports
  Reported<std::string> cuda_runtime;     // the runtime dlbench was built with
  Reported<std::string> cudnn;
  Reported<std::string> cublas;
  Reported<std::string> nccl;
};

struct GpuReport {
  // Empty when GPUs were found; otherwise says plainly why there are none.
  std::string none_reason;
  std::vector<GpuInfo> gpus;
  GpuSoftware software;
};

GpuReport query_gpus(const nvml::Nvml& nvml);

// Theoretical DRAM bandwidth in GB/s (1e9 B/s) from the memory clock and bus width.
double theoretical_bandwidth_gb_per_s(unsigned memory_clock_mhz, unsigned bus_width_bits);
// "12.4" from CUDA's integer version 12040.
std::string cuda_version_string(int version);
// cuDNN 9, cuBLAS and NCCL >= 2.9 pack versions as major*10000 + minor*100 + patch.
std::string packed_version_string(std::size_t version);

// What the CUDA runtime reports about one device; filled by cuda_query.cc.
struct CudaDevice {
  int index = 0;
  std::string name;
  std::string uuid;  // formatted like NVML's "GPU-..."
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_cache_bytes = 0;
  unsigned memory_clock_mhz = 0;
  unsigned sm_clock_mhz = 0;
  unsigned memory_bus_width_bits = 0;
};
struct CudaQuery {
  std::string unavailable_reason;  // empty when the runtime answered
  std::vector<CudaDevice> devices;
  Reported<std::string> runtime_version;
  Reported<std::string> driver_api_version;
  Reported<std::string> cudnn;
  Reported<std::string> cublas;
  Reported<std::string> nccl;
};
CudaQuery query_cuda();

// Normalizes "00000000:65:00.0" (NVML) and "0000:65:00.0" (CUDA) to "0000:65:00.0".
std::string normalize_pci_bus_id(const std::string& id);

}  // namespace dlbench::sysinfo
