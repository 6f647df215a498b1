// The pure half of the interconnect: raw NVML readings in, links, paths and a summary out.
// The NVML half is interconnect_nvml.cc.
#include "bench/sysinfo/interconnect.h"

#include <algorithm>
#include <map>
#include <set>

namespace dlbench::sysinfo {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

// One note per distinct text: "GPUs 0, 1: NVLink unknown (...)", "all GPU pairs: ...".
using Grouped = std::map<std::string, std::vector<std::string>>;
void add_grouped(std::vector<std::string>& notes, const Grouped& by, const std::string& one,
                 const std::string& many, std::size_t all) {
  for (const auto& [text, who] : by) {
    std::string subject = who.size() == 1     ? one + " " + who[0]
                          : who.size() == all ? "all " + many
                                              : many + " " + join(who, ", ");
    notes.push_back(subject + ": " + text);
  }
}

std::string pcie_sentence(PciePath path) {
  switch (path) {
    case PciePath::SameBoard:
      return "on one board";
    case PciePath::PcieSwitch:
      return "through a PCIe switch";
    case PciePath::MultipleSwitches:
      return "through several PCIe switches";
    case PciePath::HostBridge:
      return "through the host bridge";
    case PciePath::NumaNode:
      return "across host bridges of one NUMA node";
    case PciePath::AcrossSockets:
      return "across CPU sockets";
  }
  return "unknown";
}

// "PCIe Gen5 x16", or the distinct links of GPUs that differ ("PCIe Gen4 x16 / Gen5 x16").
std::string pcie_links(const std::vector<GpuLinks>& gpus) {
  std::set<std::string> links;
  for (const GpuLinks& g : gpus)
    if (g.pcie_generation_max.available() && g.pcie_width_max.available())
      links.insert("Gen" + std::to_string(g.pcie_generation_max.value()) + " x" +
                   std::to_string(g.pcie_width_max.value()));
  return links.empty() ? "PCIe" : "PCIe " + join({links.begin(), links.end()}, " / ");
}

// The PCIe paths of the given pairs: one sentence, or the nearest and the farthest.
std::string pcie_paths(const std::vector<const GpuPair*>& pairs) {
  std::vector<PciePath> known;
  for (const GpuPair* p : pairs)
    if (p->pcie_path.available()) known.push_back(p->pcie_path.value());
  if (known.empty()) return "path unknown";
  auto [nearest, farthest] = std::minmax_element(known.begin(), known.end());
  if (*nearest == *farthest) return pcie_sentence(*nearest);
  return "nearest pair " + pcie_sentence(*nearest) + ", farthest " + pcie_sentence(*farthest);
}

// "NVLink 4.0, 18 links per GPU": the version when every GPU agrees, the range of links.
std::string nvlink_phrase(const std::vector<GpuLinks>& gpus) {
  std::set<std::string> versions;
  std::set<int> links;
  for (const GpuLinks& g : gpus) {
    if (g.nvlink_version.available()) versions.insert(g.nvlink_version.value());
    if (g.nvlinks_active.available() && g.nvlinks_active.value() > 0)
      links.insert(g.nvlinks_active.value());
  }
  std::string out = "NVLink";
  if (versions.size() == 1) out += " " + *versions.begin();
  if (links.size() == 1) out += ", " + std::to_string(*links.begin()) + " links per GPU";
  if (links.size() > 1)
    out += ", " + std::to_string(*links.begin()) + "-" + std::to_string(*links.rbegin()) +
           " links per GPU";
  return out;
}

GpuLinks gpu_links(const GpuLinkReading& r) {
  GpuLinks g;
  g.nvml_index = r.nvml_index;
  g.pci_bus_id = r.pci_bus_id;
  g.pcie_generation_current = r.pcie_generation_current;
  g.pcie_width_current = r.pcie_width_current;
  g.pcie_generation_max = r.pcie_generation_max;
  g.pcie_width_max = r.pcie_width_max;
  g.nvlink_version_code = r.nvlink_version_code;
  if (!r.nvlink_unavailable.empty()) {
    g.nvlinks_active = Reported<int>::missing(r.nvlink_unavailable);
    g.nvlink_version = Reported<std::string>::missing(r.nvlink_unavailable);
    g.nvlink_version_code = Reported<unsigned>::missing(r.nvlink_unavailable);
    return g;
  }
  g.nvlinks_active = Reported<int>::of(static_cast<int>(r.active_links.size()));
  for (const NvLinkReading& link : r.active_links)
    if (link.peer == NvLinkPeer::Switch) ++g.nvlinks_to_nvswitch;
  if (r.active_links.empty())
    g.nvlink_version = Reported<std::string>::missing("no NVLink up");
  else if (r.nvlink_version_code.available())
    g.nvlink_version = nvlink_version_name(r.nvlink_version_code.value());
  else
    g.nvlink_version = Reported<std::string>::missing(r.nvlink_version_code.reason());
  return g;
}

// Links of `from` whose far end is the GPU at bus id `to` (not an NVSwitch).
int direct_links(const GpuLinkReading& from, const std::string& to) {
  if (to.empty()) return 0;
  return static_cast<int>(std::count_if(
      from.active_links.begin(), from.active_links.end(), [&](const NvLinkReading& link) {
        return link.peer != NvLinkPeer::Switch && link.remote_pci_bus_id == to;
      }));
}

constexpr const char* kNoNvSwitchP2p =
    "NVLinks to NVSwitch, but the driver allows no NVLink P2P between them (is the NVIDIA "
    "fabric manager running?)";

GpuPair gpu_pair(const std::vector<GpuLinkReading>& readings, const std::vector<GpuLinks>& gpus,
                 const PairReading& p, Grouped& pair_notes) {
  const GpuLinkReading& a = readings[p.a];
  const GpuLinkReading& b = readings[p.b];
  GpuPair pair;
  pair.gpu_a = a.nvml_index;
  pair.gpu_b = b.nvml_index;
  pair.pcie_path = p.pcie_path;
  std::string both = std::to_string(a.nvml_index) + "-" + std::to_string(b.nvml_index);
  bool p2p_refused = p.nvlink_p2p.available() && !p.nvlink_p2p.value();
  int direct = std::max(direct_links(a, b.pci_bus_id), direct_links(b, a.pci_bus_id));
  int switch_a = gpus[p.a].nvlinks_to_nvswitch, switch_b = gpus[p.b].nvlinks_to_nvswitch;
  if (direct > 0) {
    pair.nvlink = true;
    pair.nvlinks = direct;
  } else if (switch_a > 0 && switch_b > 0 && p2p_refused) {
    pair_notes[kNoNvSwitchP2p].push_back(both);
  } else if (switch_a > 0 && switch_b > 0) {
    pair.nvlink = pair.through_nvswitch = true;
    pair.nvlinks = std::min(switch_a, switch_b);  // the slower side bounds the pair
  } else if (p.nvlink_p2p.available() && p.nvlink_p2p.value()) {
    pair.nvlink = true;  // NVML says NVLink without saying which links go where
    pair_notes["NVLink by the driver's P2P status, but NVML does not say over which links"]
        .push_back(both);
  }
  if (pair.nvlink) {
    std::string count = pair.nvlinks > 0 ? std::to_string(pair.nvlinks) : "";
    pair.path = "NVLink" + (count.empty() ? "" : " x" + count) +
                (pair.through_nvswitch ? " (NVSwitch)" : "");
    pair.code = "NV" + count;
  } else if (p.pcie_path.available()) {
    pair.path = pcie_path_name(p.pcie_path.value());
    pair.code = pcie_path_code(p.pcie_path.value());
  } else {
    pair.path = "unknown (" + p.pcie_path.reason() + ")";
    pair.code = "?";
  }
  return pair;
}

std::string summary_of(const Interconnect& ic) {
  if (ic.gpus.empty()) return "no GPUs";
  if (ic.gpus.size() == 1) {
    std::string link = pcie_links(ic.gpus);
    return link == "PCIe" ? "one GPU" : "one GPU (" + link + ")";
  }
  std::vector<const GpuPair*> nvlink, pcie;
  for (const GpuPair& p : ic.pairs) (p.nvlink ? nvlink : pcie).push_back(&p);
  if (pcie.empty()) {
    bool all_switch = std::all_of(nvlink.begin(), nvlink.end(),
                                  [](const GpuPair* p) { return p->through_nvswitch; });
    return nvlink_phrase(ic.gpus) +
           (all_switch ? " (all pairs, through NVSwitch)" : " (all pairs)");
  }
  std::string over_pcie = pcie_links(ic.gpus) + ", " + pcie_paths(pcie);
  if (nvlink.empty()) return over_pcie;
  return nvlink_phrase(ic.gpus) + " on " + std::to_string(nvlink.size()) + " of " +
         std::to_string(ic.pairs.size()) + " pairs; the others over " + over_pcie;
}

// Put a Reported value, collecting the reason of an unavailable one.
template <class T>
void put(json& object, const char* name, const Reported<T>& field) {
  if (field.available()) {
    object[name] = field.value();
    return;
  }
  object[name] = nullptr;
  object["unavailable"][name] = field.reason();
}

}  // namespace

std::string pcie_path_name(PciePath path) {
  switch (path) {
    case PciePath::SameBoard:
      return "same board";
    case PciePath::PcieSwitch:
      return "PCIe switch";
    case PciePath::MultipleSwitches:
      return "multiple PCIe switches";
    case PciePath::HostBridge:
      return "host bridge";
    case PciePath::NumaNode:
      return "NUMA node";
    case PciePath::AcrossSockets:
      return "across CPU sockets";
  }
  return "unknown";
}

std::string pcie_path_code(PciePath path) {
  switch (path) {
    case PciePath::SameBoard:
      return "BRD";  // nvidia-smi has no code for NVML's INTERNAL
    case PciePath::PcieSwitch:
      return "PIX";
    case PciePath::MultipleSwitches:
      return "PXB";
    case PciePath::HostBridge:
      return "PHB";
    case PciePath::NumaNode:
      return "NODE";
    case PciePath::AcrossSockets:
      return "SYS";
  }
  return "?";
}

Reported<std::string> nvlink_version_name(unsigned code) {
  // nvmlNvlinkVersion_t: codes 1..8 stand for 1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0, 6.0.
  static const char* const kNames[] = {"1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"};
  if (code >= 1 && code <= std::size(kNames)) return Reported<std::string>::of(kNames[code - 1]);
  return Reported<std::string>::missing("NVML returned NVLink version code " +
                                        std::to_string(code) + ", unknown to this dlbench");
}

const GpuPair* Interconnect::pair(int gpu_a, int gpu_b) const {
  for (const GpuPair& p : pairs)
    if ((p.gpu_a == gpu_a && p.gpu_b == gpu_b) || (p.gpu_a == gpu_b && p.gpu_b == gpu_a)) return &p;
  return nullptr;
}

Interconnect summarize_interconnect(const std::vector<GpuLinkReading>& gpus,
                                    const std::vector<PairReading>& pairs) {
  Interconnect ic;
  Grouped nvlink_unknown, pair_notes;
  for (const GpuLinkReading& r : gpus) {
    ic.gpus.push_back(gpu_links(r));
    if (!r.nvlink_unavailable.empty() && gpus.size() > 1)  // one GPU has no one to link to
      nvlink_unknown["NVLink unknown (" + r.nvlink_unavailable + ")"].push_back(
          std::to_string(r.nvml_index));
    // The generation drops while a GPU idles to save power; a narrower link is a real fault.
    const GpuLinks& g = ic.gpus.back();
    if (g.pcie_width_current.available() && g.pcie_width_max.available() &&
        g.pcie_width_current.value() < g.pcie_width_max.value())
      ic.notes.push_back("GPU " + std::to_string(r.nvml_index) + " PCIe link runs at x" +
                         std::to_string(g.pcie_width_current.value()) + " of x" +
                         std::to_string(g.pcie_width_max.value()));
  }
  add_grouped(ic.notes, nvlink_unknown, "GPU", "GPUs", gpus.size());
  for (const PairReading& p : pairs) {
    ic.pairs.push_back(gpu_pair(gpus, ic.gpus, p, pair_notes));
    const GpuPair& pair = ic.pairs.back();
    if (!pair.nvlink && !p.pcie_path.available())
      pair_notes["PCIe path unknown (" + p.pcie_path.reason() + ")"].push_back(
          std::to_string(pair.gpu_a) + "-" + std::to_string(pair.gpu_b));
  }
  add_grouped(ic.notes, pair_notes, "GPU pair", "GPU pairs", pairs.size());
  ic.summary = summary_of(ic);
  return ic;
}

json to_json(const Interconnect& ic) {
  json gpus = json::array();
  for (const GpuLinks& g : ic.gpus) {
    json o = {{"nvml_index", g.nvml_index}, {"pci_bus_id", g.pci_bus_id}};
    put(o, "pcie_generation_current", g.pcie_generation_current);
    put(o, "pcie_width_current", g.pcie_width_current);
    put(o, "pcie_generation_max", g.pcie_generation_max);
    put(o, "pcie_width_max", g.pcie_width_max);
    put(o, "nvlinks_active", g.nvlinks_active);
    o["nvlinks_to_nvswitch"] = g.nvlinks_to_nvswitch;
    put(o, "nvlink_version", g.nvlink_version);
    put(o, "nvlink_version_code", g.nvlink_version_code);
    gpus.push_back(o);
  }
  json pairs = json::array();
  for (const GpuPair& p : ic.pairs) {
    json o = {{"gpu_a", p.gpu_a},
              {"gpu_b", p.gpu_b},
              {"path", p.path},
              {"code", p.code},
              {"nvlink", p.nvlink},
              {"nvlinks", p.nvlinks},
              {"through_nvswitch", p.through_nvswitch}};
    if (p.pcie_path.available())
      o["pcie_path"] = pcie_path_name(p.pcie_path.value());
    else
      put(o, "pcie_path", Reported<std::string>::missing(p.pcie_path.reason()));
    pairs.push_back(o);
  }
  return json{
      {"summary", ic.summary},
      {"unavailable_reason",
       ic.unavailable_reason.empty() ? json(nullptr) : json(ic.unavailable_reason)},
      {"gpus", gpus},
      {"pairs", pairs},
      {"notes", ic.notes},
  };
}

}  // namespace dlbench::sysinfo
