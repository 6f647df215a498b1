// The interconnect from fabricated NVML readings: NVSwitch boxes, PCIe-only boxes, bridged
// pairs, one GPU, and NVML missing in whole or in part.
#include "bench/sysinfo/interconnect.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "bench/nvml/nvml.h"
#include "bench/sysinfo/gpu_info.h"

namespace dlbench::sysinfo {
namespace {

std::string bus_id(int gpu) {
  char text[16];
  std::snprintf(text, sizeof text, "0000:%02x:00.0", 0x10 + gpu);
  return text;
}

GpuLinkReading gpu(int index, unsigned gen = 5, unsigned width = 16) {
  GpuLinkReading r;
  r.nvml_index = index;
  r.pci_bus_id = bus_id(index);
  r.pcie_generation_current = r.pcie_generation_max = Reported<unsigned>::of(gen);
  r.pcie_width_current = r.pcie_width_max = Reported<unsigned>::of(width);
  r.nvlink_version_code = Reported<unsigned>::missing("no NVLink up");
  return r;
}

void add_links(GpuLinkReading& r, int count, NvLinkPeer peer, const std::string& remote,
               unsigned version_code) {
  for (int i = 0; i < count; ++i)
    r.active_links.push_back({static_cast<unsigned>(r.active_links.size()), peer, remote});
  r.nvlink_version_code = Reported<unsigned>::of(version_code);
}

// Every pair of n GPUs, all over the same PCIe path.
std::vector<PairReading> pairs(int n, PciePath path) {
  std::vector<PairReading> out;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) out.push_back({a, b, Reported<PciePath>::of(path), {}});
  return out;
}

TEST(InterconnectTest, NvSwitchBoxHasNvLinkBetweenEveryPair) {
  std::vector<GpuLinkReading> gpus;
  for (int i = 0; i < 8; ++i) {
    gpus.push_back(gpu(i));
    add_links(gpus.back(), 18, NvLinkPeer::Switch, "0000:c1:00.0", NVML_NVLINK_VERSION_4_0);
  }
  auto readings = pairs(8, PciePath::AcrossSockets);
  for (auto& p : readings) p.nvlink_p2p = Reported<bool>::of(true);
  Interconnect ic = summarize_interconnect(gpus, readings);
  EXPECT_EQ(ic.summary, "NVLink 4.0, 18 links per GPU (all pairs, through NVSwitch)");
  ASSERT_EQ(ic.pairs.size(), 28u);
  const GpuPair* p = ic.pair(7, 2);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->nvlink && p->through_nvswitch);
  EXPECT_EQ(p->nvlinks, 18);
  EXPECT_EQ(p->code, "NV18");
  EXPECT_EQ(p->path, "NVLink x18 (NVSwitch)");
  EXPECT_EQ(ic.gpus[3].nvlinks_active.value(), 18);
  EXPECT_EQ(ic.gpus[3].nvlink_version.value(), "4.0");
  EXPECT_TRUE(ic.notes.empty());
}

TEST(InterconnectTest, NvSwitchWithoutP2pIsNotCountedAsNvLink) {
  std::vector<GpuLinkReading> gpus = {gpu(0), gpu(1)};
  for (auto& g : gpus) add_links(g, 18, NvLinkPeer::Switch, "0000:c1:00.0", 6);
  auto readings = pairs(2, PciePath::NumaNode);
  readings[0].nvlink_p2p = Reported<bool>::of(false);
  Interconnect ic = summarize_interconnect(gpus, readings);
  EXPECT_FALSE(ic.pairs[0].nvlink);
  EXPECT_EQ(ic.pairs[0].code, "NODE");
  ASSERT_EQ(ic.notes.size(), 1u);
  EXPECT_NE(ic.notes[0].find("fabric manager"), std::string::npos);
}

TEST(InterconnectTest, PcieOnlyBoxNamesThePath) {
  std::vector<GpuLinkReading> gpus = {gpu(0), gpu(1), gpu(2), gpu(3)};
  Interconnect ic = summarize_interconnect(gpus, pairs(4, PciePath::HostBridge));
  EXPECT_EQ(ic.summary, "PCIe Gen5 x16, through the host bridge");
  EXPECT_EQ(ic.pair(0, 3)->code, "PHB");
  EXPECT_EQ(ic.pair(0, 3)->path, "host bridge");
  EXPECT_FALSE(ic.pair(0, 3)->nvlink);
  EXPECT_EQ(ic.gpus[0].nvlinks_active.value(), 0);
  EXPECT_FALSE(ic.gpus[0].nvlink_version.available());

  auto mixed = pairs(4, PciePath::AcrossSockets);
  mixed[0].pcie_path = Reported<PciePath>::of(PciePath::PcieSwitch);  // GPUs 0 and 1
  ic = summarize_interconnect(gpus, mixed);
  EXPECT_EQ(ic.summary,
            "PCIe Gen5 x16, nearest pair through a PCIe switch, farthest across CPU sockets");
  EXPECT_EQ(ic.pair(1, 0)->code, "PIX");
}

TEST(InterconnectTest, BridgedPairsAndPcieForTheRest) {
  // Two NVLink bridges (4 links each, A100 PCIe style): 0-1 and 2-3; the rest across sockets.
  std::vector<GpuLinkReading> gpus;
  for (int i = 0; i < 4; ++i) {
    gpus.push_back(gpu(i, 4));
    add_links(gpus.back(), 4, NvLinkPeer::Gpu, bus_id(i ^ 1), NVML_NVLINK_VERSION_3_0);
  }
  Interconnect ic = summarize_interconnect(gpus, pairs(4, PciePath::AcrossSockets));
  EXPECT_EQ(ic.summary,
            "NVLink 3.0, 4 links per GPU on 2 of 6 pairs; the others over PCIe Gen4 x16, across "
            "CPU sockets");
  EXPECT_EQ(ic.pair(2, 3)->code, "NV4");
  EXPECT_FALSE(ic.pair(2, 3)->through_nvswitch);
  EXPECT_EQ(ic.pair(1, 2)->code, "SYS");
  EXPECT_EQ(ic.pair(1, 2)->path, "across CPU sockets");
}

TEST(InterconnectTest, LinksSeenFromOneSideOnlyStillCount) {
  std::vector<GpuLinkReading> gpus = {gpu(0), gpu(1)};
  add_links(gpus[1], 2, NvLinkPeer::Unknown, bus_id(0), 6);  // GPU 0 could not say where
  add_links(gpus[0], 2, NvLinkPeer::Unknown, "", 6);
  Interconnect ic = summarize_interconnect(gpus, pairs(2, PciePath::HostBridge));
  EXPECT_EQ(ic.summary, "NVLink 4.0, 2 links per GPU (all pairs)");
  EXPECT_EQ(ic.pairs[0].nvlinks, 2);
}

TEST(InterconnectTest, OneGpuAndNoGpu) {
  Interconnect ic = summarize_interconnect({gpu(0, 5, 16)}, {});
  EXPECT_EQ(ic.summary, "one GPU (PCIe Gen5 x16)");
  EXPECT_TRUE(ic.pairs.empty());
  EXPECT_EQ(summarize_interconnect({}, {}).summary, "no GPUs");
}

TEST(InterconnectTest, WhatNvmlCouldNotSayBecomesNotes) {
  std::vector<GpuLinkReading> gpus = {gpu(0), gpu(1), gpu(2)};
  for (auto& g : gpus) g.nvlink_unavailable = "function not found";
  gpus[0].nvlink_unavailable = "no permission";
  gpus[2].pcie_width_current = Reported<unsigned>::of(8);
  auto readings = pairs(3, PciePath::HostBridge);
  for (auto& p : readings) p.pcie_path = Reported<PciePath>::missing("no permission");
  Interconnect ic = summarize_interconnect(gpus, readings);
  EXPECT_FALSE(ic.gpus[0].nvlinks_active.available());
  EXPECT_EQ(ic.gpus[1].nvlinks_active.reason(), "function not found");
  EXPECT_EQ(ic.pairs[0].code, "?");
  EXPECT_EQ(ic.pairs[0].path, "unknown (no permission)");
  EXPECT_EQ(ic.summary, "PCIe Gen5 x16, path unknown");
  std::vector<std::string> expected = {
      "GPU 2 PCIe link runs at x8 of x16",
      "GPUs 1, 2: NVLink unknown (function not found)",
      "GPU 0: NVLink unknown (no permission)",
      "all GPU pairs: PCIe path unknown (no permission)",
  };
  EXPECT_EQ(ic.notes, expected);
}

TEST(InterconnectTest, JsonSaysWhyAValueIsMissing) {
  std::vector<GpuLinkReading> gpus = {gpu(0), gpu(1)};
  gpus[1].pcie_generation_max = Reported<unsigned>::missing("not supported");
  auto readings = pairs(2, PciePath::PcieSwitch);
  Interconnect ic = summarize_interconnect(gpus, readings);
  nlohmann::json j = to_json(ic);
  EXPECT_EQ(j["summary"], ic.summary);
  EXPECT_TRUE(j["unavailable_reason"].is_null());
  EXPECT_TRUE(j["gpus"][1]["pcie_generation_max"].is_null());
  EXPECT_EQ(j["gpus"][1]["unavailable"]["pcie_generation_max"], "not supported");
  EXPECT_EQ(j["gpus"][0]["pcie_generation_max"], 5);
  EXPECT_EQ(j["pairs"][0]["code"], "PIX");
  EXPECT_EQ(j["pairs"][0]["pcie_path"], "PCIe switch");
  EXPECT_EQ(j["pairs"][0]["nvlink"], false);
}

TEST(InterconnectTest, NamesAndCodes) {
  EXPECT_EQ(nvlink_version_name(NVML_NVLINK_VERSION_4_0).value(), "4.0");
  EXPECT_EQ(nvlink_version_name(NVML_NVLINK_VERSION_2_2).value(), "2.2");
  EXPECT_EQ(nvlink_version_name(NVML_NVLINK_VERSION_5_0).value(), "5.0");
  EXPECT_FALSE(nvlink_version_name(0).available());
  EXPECT_FALSE(nvlink_version_name(99).available());
  EXPECT_EQ(pcie_path_name(PciePath::SameBoard), "same board");
  EXPECT_EQ(pcie_path_name(PciePath::MultipleSwitches), "multiple PCIe switches");
  EXPECT_EQ(pcie_path_name(PciePath::NumaNode), "NUMA node");
  EXPECT_EQ(pcie_path_code(PciePath::MultipleSwitches), "PXB");
  EXPECT_EQ(pcie_path_code(PciePath::AcrossSockets), "SYS");
}

TEST(InterconnectTest, WithoutNvmlTheInterconnectIsUnknownAndSaysWhy) {
  auto nvml = nvml::Nvml::open("/nonexistent/libnvidia-ml.so.1");
  Interconnect ic = describe_interconnect(*nvml, {});
  EXPECT_NE(ic.unavailable_reason.find("no NVIDIA driver"), std::string::npos);
  EXPECT_EQ(ic.summary.rfind("unknown (", 0), 0u) << ic.summary;
  EXPECT_TRUE(ic.gpus.empty());
  EXPECT_FALSE(to_json(ic)["unavailable_reason"].is_null());
}

// A fabricated driver: GPUs 0 and 1 joined by two NVLink 3.0 links, GPU 2 without NVLink,
// all three on different sockets except 0 and 1 (one PCIe switch). No P2P status function.
nvmlDevice_t handle(unsigned i) {
  return reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(i + 1));
}
unsigned index_of(nvmlDevice_t d) {
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(d) - 1);
}
void fill_bus_id(nvmlPciInfo_t* pci, unsigned gpu) {
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", 0x10 + gpu);
}

nvml::Api fake_driver() {
  nvml::Api api;
  api.nvmlDeviceGetCount_v2 = [](unsigned* n) -> nvmlReturn_t {
    *n = 3;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetHandleByIndex_v2 = [](unsigned i, nvmlDevice_t* d) -> nvmlReturn_t {
    *d = handle(i);
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetPciInfo_v3 = [](nvmlDevice_t d, nvmlPciInfo_t* pci) -> nvmlReturn_t {
    fill_bus_id(pci, index_of(d));
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetMaxPcieLinkGeneration = [](nvmlDevice_t, unsigned* v) -> nvmlReturn_t {
    *v = 4;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetMaxPcieLinkWidth = [](nvmlDevice_t, unsigned* v) -> nvmlReturn_t {
    *v = 16;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetNvLinkState = [](nvmlDevice_t d, unsigned link,
                                    nvmlEnableState_t* s) -> nvmlReturn_t {
    if (index_of(d) == 2) return NVML_ERROR_NOT_SUPPORTED;
    if (link >= 12) return NVML_ERROR_INVALID_ARGUMENT;
    *s = link < 2 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetNvLinkRemotePciInfo_v2 = [](nvmlDevice_t d, unsigned,
                                               nvmlPciInfo_t* pci) -> nvmlReturn_t {
    fill_bus_id(pci, index_of(d) ^ 1);
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetNvLinkRemoteDeviceType = [](nvmlDevice_t, unsigned,
                                               nvmlIntNvLinkDeviceType_t* t) -> nvmlReturn_t {
    *t = NVML_NVLINK_DEVICE_TYPE_GPU;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetNvLinkVersion = [](nvmlDevice_t, unsigned, unsigned* v) -> nvmlReturn_t {
    *v = NVML_NVLINK_VERSION_3_0;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetTopologyCommonAncestor = [](nvmlDevice_t a, nvmlDevice_t b,
                                               nvmlGpuTopologyLevel_t* level) -> nvmlReturn_t {
    *level = index_of(a) + index_of(b) == 1 ? NVML_TOPOLOGY_SINGLE : NVML_TOPOLOGY_SYSTEM;
    return NVML_SUCCESS;
  };
  return api;
}

TEST(InterconnectTest, ReadsLinksAndPathsFromNvml) {
  auto nvml = nvml::Nvml::from_functions(fake_driver());
  Interconnect ic = describe_interconnect(*nvml, {});
  EXPECT_TRUE(ic.unavailable_reason.empty());
  ASSERT_EQ(ic.gpus.size(), 3u);
  EXPECT_EQ(ic.gpus[1].pci_bus_id, "0000:11:00.0");
  EXPECT_EQ(ic.gpus[0].nvlinks_active.value(), 2);
  EXPECT_EQ(ic.gpus[0].nvlink_version.value(), "3.0");
  EXPECT_EQ(ic.gpus[2].nvlinks_active.value(), 0);
  // The current link is not in this driver: unavailable, with the reason.
  EXPECT_NE(ic.gpus[0].pcie_width_current.reason().find("nvmlDeviceGetCurrPcieLinkWidth"),
            std::string::npos);
  EXPECT_EQ(ic.pair(0, 1)->code, "NV2");
  EXPECT_EQ(ic.pair(0, 2)->code, "SYS");
  EXPECT_EQ(ic.summary,
            "NVLink 3.0, 2 links per GPU on 1 of 3 pairs; the others over PCIe Gen4 x16, across "
            "CPU sockets");

  const int some[] = {2, 0, 7};
  ic = describe_interconnect(*nvml, some);
  ASSERT_EQ(ic.gpus.size(), 2u);
  EXPECT_EQ(ic.gpus[0].nvml_index, 2);
  EXPECT_EQ(ic.pair(0, 2)->code, "SYS");
  ASSERT_FALSE(ic.notes.empty());
  EXPECT_EQ(ic.notes[0], "GPU 7 left out: NVML lists 3 GPUs");
  EXPECT_EQ(ic.summary, "PCIe Gen4 x16, across CPU sockets");
}

TEST(InterconnectTest, CudaDevicesMapToNvmlIndices) {
  GpuReport report;
  for (int i = 0; i < 3; ++i) {
    GpuInfo g;
    g.nvml_index = Reported<int>::of(i);
    g.cuda_index = i == 0 ? Reported<int>::missing("hidden") : Reported<int>::of(i - 1);
    report.gpus.push_back(g);
  }
  const int cuda[] = {1, 0, 5};
  EXPECT_EQ(nvml_indices_of_cuda_devices(report, cuda), (std::vector<int>{2, 1}));
}

}  // namespace
}  // namespace dlbench::sysinfo
