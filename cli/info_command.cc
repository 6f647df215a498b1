// dlbench info: the machine as a deep-learning box.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "bench/nvml/nvml.h"
#include "bench/sysinfo/machine_info.h"
#include "cli/commands.h"
#include "cli/text_table.h"
#include "engine/core/json_text.h"

namespace dlbench::cli {
namespace {

using sysinfo::GpuInfo;
using sysinfo::MachineInfo;

template <class T, class Format>
std::string show(const Reported<T>& field, Format format) {
  return field.available() ? format(field.value()) : "n/a (" + field.reason() + ")";
}
std::string show(const Reported<std::string>& field) {
  return show(field, [](const std::string& s) { return s; });
}
std::string yes_no(bool on) {
  return on ? "on" : "off";
}

std::string plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

Section host_section(const MachineInfo& m) {
  const auto& h = m.host;
  auto count = [](const char* word) { return [word](int n) { return plural(n, word); }; };
  Section s("Host");
  s.row("Hostname", h.hostname)
      .row("CPU", show(h.cpu_model))
      .row("Sockets", show(h.sockets, count("socket")))
      .row("Cores", show(h.cores, count("physical core")))
      .row("Threads", show(h.threads, count("thread")))
      .row("NUMA nodes", show(h.numa_nodes, [](int n) { return std::to_string(n); }))
      .row("Memory", show(h.memory_bytes, [](std::uint64_t b) { return format_bytes(b); }))
      .row("OS", show(h.os) + ", kernel " + h.kernel + ", " + h.architecture);
  return s;
}

Section software_section(const MachineInfo& m) {
  const auto& sw = m.gpu.software;
  Section s("GPU software");
  s.row("NVIDIA driver", show(sw.driver_version))
      .row("CUDA driver API", show(sw.cuda_driver_api))
      .row("CUDA runtime", show(sw.cuda_runtime))
      .row("cuDNN", show(sw.cudnn))
      .row("cuBLAS", show(sw.cublas))
      .row("NCCL", show(sw.nccl));
  return s;
}

Section gpu_section(const GpuInfo& g) {
  auto num = [](auto v) { return std::to_string(v); };
  auto mhz = [](unsigned v) { return std::to_string(v) + " MHz"; };
  auto bytes = [](std::uint64_t b) { return format_bytes(static_cast<double>(b)); };
  std::string title = "GPU";
  if (g.nvml_index.available()) title += " " + std::to_string(g.nvml_index.value());
  title += ": " + g.name;
  Section s(title);
  s.row("CUDA device", show(g.cuda_index, num))
      .row("UUID", show(g.uuid))
      .row("PCI bus id", show(g.pci_bus_id))
      .row("Compute capability", show(g.compute_capability))
      .row("SMs", show(g.sm_count, num))
      .row("Memory", show(g.memory_bytes, bytes))
      .row("L2 cache", show(g.l2_cache_bytes, bytes))
      .row("Max SM clock", show(g.max_sm_clock_mhz, mhz))
      .row("Max memory clock", show(g.max_memory_clock_mhz, mhz))
      .row("Memory bus",
           show(g.memory_bus_width_bits, [](unsigned v) { return std::to_string(v) + " bit"; }))
      .row("Memory bandwidth", show(g.memory_bandwidth_gb_per_s,
                                    [](double v) {
                                      char text[48];
                                      std::snprintf(text, sizeof text, "%.0f GB/s (theoretical)",
                                                    v);
                                      return std::string(text);
                                    }))
      .row("PCIe (max)", show(g.pcie_generation_max,
                              [&](unsigned gen) {
                                return "gen " + std::to_string(gen) + " x" +
                                       show(g.pcie_width_max, num);
                              }))
      .row("PCIe (now)", show(g.pcie_generation_current,
                              [&](unsigned gen) {
                                return "gen " + std::to_string(gen) + " x" +
                                       show(g.pcie_width_current, num);
                              }))
      .row("NVLink", show(g.nvlink_links_active, [](int n) { return plural(n, "link") + " up"; }))
      .row("Power limit", show(g.power_limit_w,
                               [](double w) {
                                 char text[32];
                                 std::snprintf(text, sizeof text, "%.0f W", w);
                                 return std::string(text);
                               }))
      .row("ECC", show(g.ecc_enabled, yes_no))
      .row("MIG", show(g.mig_enabled, yes_no))
      .row("Persistence mode", show(g.persistence_enabled, yes_no));
  return s;
}

// What each code of the GPU x GPU matrix means, as nvidia-smi topo -m prints them.
const std::map<std::string, std::string>& matrix_legend() {
  static const std::map<std::string, std::string> legend = {
      {"NV", "NVLink, # links (through NVSwitch: the fewer links of the two GPUs)"},
      {"BRD", "same board"},
      {"PIX", "one PCIe switch"},
      {"PXB", "several PCIe switches"},
      {"PHB", "the host bridge"},
      {"NODE", "host bridges of one NUMA node"},
      {"SYS", "across CPU sockets"},
      {"?", "unknown (see the notes)"},
  };
  return legend;
}

// Summary, then (2+ GPUs) a GPU x GPU matrix like nvidia-smi topo -m, its legend, the notes.
Section interconnect_section(const sysinfo::Interconnect& ic) {
  Section s("Interconnect");
  s.row("Summary", ic.summary);
  if (ic.gpus.size() >= 2) {
    std::size_t width = 0;
    for (const auto& g : ic.gpus) width = std::max(width, 3 + std::to_string(g.nvml_index).size());
    for (const auto& p : ic.pairs) width = std::max(width, p.code.size());
    auto cell = [&](const std::string& text) {
      return text + std::string(width + 2 - text.size(), ' ');
    };
    auto trimmed = [](std::string line) { return line.erase(line.find_last_not_of(' ') + 1); };
    std::string header;
    for (const auto& g : ic.gpus) header += cell("GPU" + std::to_string(g.nvml_index));
    s.row("", trimmed(header));
    std::map<std::string, std::string> used;
    for (const auto& a : ic.gpus) {
      std::string line;
      for (const auto& b : ic.gpus) {
        const sysinfo::GpuPair* p = ic.pair(a.nvml_index, b.nvml_index);
        std::string code = a.nvml_index == b.nvml_index ? "X" : p ? p->code : "?";
        line += cell(code);
        std::string key = code.rfind("NV", 0) == 0 ? "NV" : code;
        if (matrix_legend().count(key)) used[key == "NV" ? "NV#" : key] = matrix_legend().at(key);
      }
      s.row("GPU" + std::to_string(a.nvml_index), trimmed(line));
    }
    std::string legend;
    for (const auto& [code, meaning] : used)
      legend += (legend.empty() ? "" : "; ") + code + " = " + meaning;
    s.row("Legend", legend);
  }
  for (const std::string& note : ic.notes) s.row("Note", note);
  return s;
}

void print_text(const MachineInfo& m, std::ostream& out) {
  const auto& b = m.build;
  out << "dlbench " << b.version << " (git " << b.git_hash << ", " << b.compiler << ", "
      << b.build_type << ", "
      << (b.cuda ? "CUDA sm_" + b.cuda_architectures : std::string("CPU-only build")) << ")\n\n";
  host_section(m).print(out);
  out << "\n";
  software_section(m).print(out);
  out << "\n";
  if (m.gpu.gpus.empty()) {
    out << "GPUs: none (" << m.gpu.none_reason << "); dlbench will run on the CPU.\n";
    return;
  }
  for (const GpuInfo& g : m.gpu.gpus) {
    gpu_section(g).print(out);
    out << "\n";
  }
  interconnect_section(m.interconnect).print(out);
}

}  // namespace

void add_info_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* info = app.add_subcommand(
      "info",
      "Describe this machine as a deep-learning box: CPU, memory, GPUs, drivers, libraries");
  info->callback([&global] {
    auto nvml = nvml::Nvml::open();
    MachineInfo machine = sysinfo::query_machine(*nvml);
    if (global.json)
      std::cout << dump_json(sysinfo::to_json(machine), 2) << "\n";
    else
      print_text(machine, std::cout);
  });
}

}  // namespace dlbench::cli
