// The CUDA runtime's view of the GPUs, and the versions of the CUDA libraries dlbench links.
// Compiled only into CUDA builds; cuda_query_none.cc stands in for CPU-only builds.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstdio>

#include "bench/sysinfo/gpu_info.h"

namespace dlbench::sysinfo {
namespace {

std::string uuid_string(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

unsigned attribute_khz_to_mhz(cudaDeviceAttr attr, int device) {
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, attr, device) != cudaSuccess) return 0;
  return static_cast<unsigned>(khz / 1000);
}

}  // namespace

CudaQuery query_cuda() {
  CudaQuery q;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    q.runtime_version = Reported<std::string>::of(cuda_version_string(runtime));
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    q.driver_api_version = Reported<std::string>::of(cuda_version_string(driver));
  else
    q.driver_api_version = Reported<std::string>::missing("no NVIDIA driver");
  q.cudnn = Reported<std::string>::of(packed_version_string(cudnnGetVersion()));
  q.cublas = Reported<std::string>::of(packed_version_string(cublasLtGetVersion()));
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess)
    q.nccl = Reported<std::string>::of(packed_version_string(static_cast<std::size_t>(nccl)));
  else
    q.nccl = Reported<std::string>::missing("ncclGetVersion failed");

  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    q.unavailable_reason = std::string("CUDA runtime: ") + cudaGetErrorString(rc);
    cudaGetLastError();  // clear it so later runtime calls start clean
    return q;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    CudaDevice d;
    d.index = i;
    d.name = prop.name;
    d.uuid = uuid_string(prop.uuid);
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pci_bus_id = bus;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.memory_bytes = prop.totalGlobalMem;
    d.l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    d.memory_bus_width_bits = static_cast<unsigned>(prop.memoryBusWidth);
    d.memory_clock_mhz = attribute_khz_to_mhz(cudaDevAttrMemoryClockRate, i);
    d.sm_clock_mhz = attribute_khz_to_mhz(cudaDevAttrClockRate, i);
    q.devices.push_back(d);
  }
  return q;
}

}  // namespace dlbench::sysinfo
