// How the GPUs of this machine reach each other: NVLink (direct or through NVSwitch) or PCIe,
// from NVML. Multi-GPU results depend on it as much as on the GPUs, so every run records it.
//
// Two halves: reading NVML into raw per-GPU and per-pair readings (describe_interconnect), and
// turning readings into links, paths and a one-line summary (summarize_interconnect), which is
// pure and tested with fabricated readings.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/reported.h"

namespace dlbench::nvml {
class Nvml;
}

namespace dlbench::sysinfo {

struct GpuReport;

// The nearest common ancestor of two GPUs in the PCIe tree (nvmlGpuTopologyLevel_t), nearest
// first. nvidia-smi topo -m calls them PIX, PXB, PHB, NODE and SYS.
enum class PciePath {
  SameBoard,
  PcieSwitch,
  MultipleSwitches,
  HostBridge,
  NumaNode,
  AcrossSockets
};

// What the far end of one NVLink is.
enum class NvLinkPeer { Gpu, Switch, Cpu, Unknown };

// ---- Raw readings: what NVML said, nothing derived. ----

struct NvLinkReading {
  unsigned link = 0;
  NvLinkPeer peer = NvLinkPeer::Unknown;
  std::string remote_pci_bus_id;  // normalized ("0000:65:00.0"); empty when NVML did not say
};

struct GpuLinkReading {
  int nvml_index = 0;
  std::string pci_bus_id;  // normalized; empty when unknown
  Reported<unsigned> pcie_generation_current, pcie_width_current;
  Reported<unsigned> pcie_generation_max, pcie_width_max;  // what this GPU in this slot can do
  // The links that are up; none on a GPU without NVLink. nvlink_unavailable says why NVML
  // could not tell (then active_links is empty and means "unknown", not "none").
  std::vector<NvLinkReading> active_links;
  std::string nvlink_unavailable;
  Reported<unsigned> nvlink_version_code;  // nvmlNvlinkVersion_t of the first active link
};

struct PairReading {
  int a = 0, b = 0;  // positions in the GpuLinkReading list, a < b
  Reported<PciePath> pcie_path;
  Reported<bool> nvlink_p2p;  // nvmlDeviceGetP2PStatus(NVLINK): the driver can use NVLink
};

// ---- The description. ----

struct GpuLinks {
  int nvml_index = 0;
  std::string pci_bus_id;
  Reported<unsigned> pcie_generation_current, pcie_width_current;
  Reported<unsigned> pcie_generation_max, pcie_width_max;
  Reported<int> nvlinks_active;
  int nvlinks_to_nvswitch = 0;
  Reported<std::string> nvlink_version;  // "4.0"
  Reported<unsigned> nvlink_version_code;
};

struct GpuPair {
  int gpu_a = 0, gpu_b = 0;  // NVML indices
  bool nvlink = false;
  int nvlinks = 0;  // links between the two (through NVSwitch: the fewer of the two GPUs');
                    // 0 with nvlink set when NVML says NVLink but not which links
  bool through_nvswitch = false;
  Reported<PciePath> pcie_path;
  std::string path;  // "NVLink x18", "host bridge", "unknown (why)"
  std::string code;  // as nvidia-smi topo -m: "NV18", "PHB", "?"
};

struct Interconnect {
  std::string unavailable_reason;  // empty when NVML answered
  std::vector<GpuLinks> gpus;
  std::vector<GpuPair> pairs;  // every pair once, (0,1), (0,2), ..., (1,2), ...
  // "NVLink 4.0, 18 links per GPU (all pairs, through NVSwitch)", "PCIe Gen5 x16, through
  // the host bridge", "one GPU (PCIe Gen5 x16)".
  std::string summary;
  std::vector<std::string> notes;  // what NVML could not say, links that look degraded

  // The pair of two NVML indices in either order; nullptr when not described.
  const GpuPair* pair(int gpu_a, int gpu_b) const;
};

// Reads NVML for the GPUs of the given NVML indices (empty: every GPU). Never throws: what
// NVML cannot say is unavailable with the reason.
Interconnect describe_interconnect(const nvml::Nvml& nvml, std::span<const int> gpu_indices);

// The pure half: links, paths, summary and notes from raw readings.
Interconnect summarize_interconnect(const std::vector<GpuLinkReading>& gpus,
                                    const std::vector<PairReading>& pairs);

// NVML indices of CUDA devices (CUDA_VISIBLE_DEVICES renumbers them), matched in GpuReport;
// a device NVML does not list is left out.
std::vector<int> nvml_indices_of_cuda_devices(const GpuReport& report,
                                              std::span<const int> cuda_devices);

std::string pcie_path_name(PciePath path);  // "host bridge"
std::string pcie_path_code(PciePath path);  // "PHB"
// "4.0" from nvmlNvlinkVersion_t's code 6; missing for codes this build does not know.
Reported<std::string> nvlink_version_name(unsigned code);

// JSON: unavailable values are null with the reason under the object's "unavailable" key.
nlohmann::json to_json(const Interconnect& interconnect);

}  // namespace dlbench::sysinfo
