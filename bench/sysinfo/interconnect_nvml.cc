// The NVML half of the interconnect: raw per-GPU and per-pair readings, then
// summarize_interconnect (interconnect.cc) makes sense of them.
#include "bench/nvml/nvml.h"
#include "bench/sysinfo/gpu_info.h"
#include "bench/sysinfo/interconnect.h"

namespace dlbench::sysinfo {
namespace {

using nvml::Nvml;
using nvml::Status;

using nvml::reported;

NvLinkPeer peer_of(nvmlIntNvLinkDeviceType_t type) {
  switch (type) {
    case NVML_NVLINK_DEVICE_TYPE_GPU:
      return NvLinkPeer::Gpu;
    case NVML_NVLINK_DEVICE_TYPE_SWITCH:
      return NvLinkPeer::Switch;
    case NVML_NVLINK_DEVICE_TYPE_IBMNPU:
      return NvLinkPeer::Cpu;
    default:
      return NvLinkPeer::Unknown;
  }
}

std::string bus_id_of(const nvmlPciInfo_t& pci) {
  return normalize_pci_bus_id(pci.busId[0] != '\0' ? pci.busId : pci.busIdLegacy);
}

void read_nvlinks(const Nvml& nvml, nvmlDevice_t dev, GpuLinkReading& r) {
  r.nvlink_version_code = Reported<unsigned>::missing("no NVLink up");
  for (unsigned link = 0; link < nvml::kMaxNvLinks; ++link) {
    nvmlEnableState_t state = NVML_FEATURE_DISABLED;
    Status st = DLBENCH_NVML(nvml, nvmlDeviceGetNvLinkState, dev, link, &state);
    // Link 0 says whether the GPU has NVLink at all (NOT_SUPPORTED: it has none); a later link
    // may be missing on a product with fewer links.
    if (!st.ok() && link == 0) {
      if (st.code != NVML_ERROR_NOT_SUPPORTED) r.nvlink_unavailable = st.reason;
      return;
    }
    if (!st.ok() || state != NVML_FEATURE_ENABLED) continue;
    NvLinkReading reading;
    reading.link = link;
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    if (DLBENCH_NVML(nvml, nvmlDeviceGetNvLinkRemoteDeviceType, dev, link, &type).ok())
      reading.peer = peer_of(type);
    nvmlPciInfo_t remote{};
    if (DLBENCH_NVML(nvml, nvmlDeviceGetNvLinkRemotePciInfo_v2, dev, link, &remote).ok())
      reading.remote_pci_bus_id = bus_id_of(remote);
    if (r.active_links.empty()) {
      unsigned code = 0;
      st = DLBENCH_NVML(nvml, nvmlDeviceGetNvLinkVersion, dev, link, &code);
      r.nvlink_version_code = reported(st, code);
    }
    r.active_links.push_back(reading);
  }
}

GpuLinkReading read_gpu(const Nvml& nvml, nvmlDevice_t dev, int index) {
  GpuLinkReading r;
  r.nvml_index = index;
  nvmlPciInfo_t pci{};
  if (DLBENCH_NVML(nvml, nvmlDeviceGetPciInfo_v3, dev, &pci).ok()) r.pci_bus_id = bus_id_of(pci);
  unsigned value = 0;
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetCurrPcieLinkGeneration, dev, &value);
  r.pcie_generation_current = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetCurrPcieLinkWidth, dev, &value);
  r.pcie_width_current = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxPcieLinkGeneration, dev, &value);
  r.pcie_generation_max = reported(st, value);
  st = DLBENCH_NVML(nvml, nvmlDeviceGetMaxPcieLinkWidth, dev, &value);
  r.pcie_width_max = reported(st, value);
  read_nvlinks(nvml, dev, r);
  return r;
}

Reported<PciePath> pcie_path_of(const Nvml& nvml, nvmlDevice_t a, nvmlDevice_t b) {
  nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetTopologyCommonAncestor, a, b, &level);
  if (!st.ok()) return Reported<PciePath>::missing(st.reason);
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL:
      return Reported<PciePath>::of(PciePath::SameBoard);
    case NVML_TOPOLOGY_SINGLE:
      return Reported<PciePath>::of(PciePath::PcieSwitch);
    case NVML_TOPOLOGY_MULTIPLE:
      return Reported<PciePath>::of(PciePath::MultipleSwitches);
    case NVML_TOPOLOGY_HOSTBRIDGE:
      return Reported<PciePath>::of(PciePath::HostBridge);
    case NVML_TOPOLOGY_NODE:
      return Reported<PciePath>::of(PciePath::NumaNode);
    case NVML_TOPOLOGY_SYSTEM:
      return Reported<PciePath>::of(PciePath::AcrossSockets);
  }
  return Reported<PciePath>::missing("NVML topology level " +
                                     std::to_string(static_cast<int>(level)) +
                                     " is unknown to this dlbench");
}

Interconnect unavailable(const std::string& why) {
  Interconnect ic;
  ic.unavailable_reason = why;
  ic.summary = "unknown (" + why + ")";
  return ic;
}

}  // namespace

Interconnect describe_interconnect(const nvml::Nvml& nvml, std::span<const int> gpu_indices) {
  if (!nvml.loaded()) return unavailable("NVML unavailable: " + nvml.why_unavailable());
  unsigned count = 0;
  Status st = DLBENCH_NVML(nvml, nvmlDeviceGetCount_v2, &count);
  if (!st.ok()) return unavailable("NVML could not count GPUs: " + st.reason);
  std::vector<int> indices(gpu_indices.begin(), gpu_indices.end());
  if (indices.empty())
    for (unsigned i = 0; i < count; ++i) indices.push_back(static_cast<int>(i));

  std::vector<std::string> notes;
  std::vector<nvmlDevice_t> devices;
  std::vector<GpuLinkReading> gpus;
  for (int index : indices) {
    nvmlDevice_t dev = nullptr;
    st = index >= 0 && static_cast<unsigned>(index) < count
             ? DLBENCH_NVML(nvml, nvmlDeviceGetHandleByIndex_v2, static_cast<unsigned>(index), &dev)
             : Status{NVML_ERROR_INVALID_ARGUMENT, "NVML lists " + std::to_string(count) + " GPUs"};
    if (!st.ok()) {
      notes.push_back("GPU " + std::to_string(index) + " left out: " + st.reason);
      continue;
    }
    devices.push_back(dev);
    gpus.push_back(read_gpu(nvml, dev, index));
  }
  std::vector<PairReading> pairs;
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = a + 1; b < gpus.size(); ++b) {
      PairReading p;
      p.a = static_cast<int>(a);
      p.b = static_cast<int>(b);
      p.pcie_path = pcie_path_of(nvml, devices[a], devices[b]);
      nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
      st = DLBENCH_NVML(nvml, nvmlDeviceGetP2PStatus, devices[a], devices[b],
                        NVML_P2P_CAPS_INDEX_NVLINK, &status);
      p.nvlink_p2p = reported(st, status == NVML_P2P_STATUS_OK);
      pairs.push_back(p);
    }
  }
  Interconnect ic = summarize_interconnect(gpus, pairs);
  ic.notes.insert(ic.notes.begin(), notes.begin(), notes.end());
  return ic;
}

std::vector<int> nvml_indices_of_cuda_devices(const GpuReport& report,
                                              std::span<const int> cuda_devices) {
  std::vector<int> indices;
  for (int cuda : cuda_devices)
    for (const GpuInfo& gpu : report.gpus)
      if (gpu.cuda_index.available() && gpu.cuda_index.value() == cuda &&
          gpu.nvml_index.available())
        indices.push_back(gpu.nvml_index.value());
  return indices;
}

}  // namespace dlbench::sysinfo
