#include "bench/sysinfo/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace dlbench::sysinfo {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string_view s) {
  const char* space = " \t\r\n\"";
  auto begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  auto end = s.find_last_not_of(space);
  return std::string(s.substr(begin, end - begin + 1));
}

// Value of the first "key<sep>value" line whose key matches, trimmed.
std::string find_value(std::string_view text, std::string_view key, char separator) {
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    auto sep = line.find(separator);
    if (sep == std::string::npos) continue;
    if (trim(std::string_view(line).substr(0, sep)) == key) return trim(line.substr(sep + 1));
  }
  return {};
}

int read_int(const fs::path& path, int fallback) {
  std::ifstream in(path);
  int value = fallback;
  if (in >> value) return value;
  return fallback;
}

}  // namespace

CpuTopology count_topology(const std::vector<CoreId>& cpus) {
  std::set<int> packages;
  std::set<std::pair<int, int>> cores;
  for (const CoreId& cpu : cpus) {
    packages.insert(cpu.package);
    cores.insert({cpu.package, cpu.core});
  }
  return {static_cast<int>(packages.size()), static_cast<int>(cores.size())};
}

Reported<std::string> parse_cpu_model(std::string_view cpuinfo) {
  // x86 says "model name"; some Arm kernels say "Model" or nothing at all.
  for (const char* key : {"model name", "Model", "Processor", "cpu model"}) {
    std::string value = find_value(cpuinfo, key, ':');
    if (!value.empty()) return Reported<std::string>::of(value);
  }
  return Reported<std::string>::missing("/proc/cpuinfo names no CPU model");
}

Reported<std::uint64_t> parse_mem_total(std::string_view meminfo) {
  std::string value = find_value(meminfo, "MemTotal", ':');  // "24576000 kB"
  std::istringstream in(value);
  std::uint64_t kib = 0;
  std::string unit;
  if (in >> kib >> unit && unit == "kB") return Reported<std::uint64_t>::of(kib * 1024);
  return Reported<std::uint64_t>::missing("no MemTotal in /proc/meminfo");
}

Reported<std::string> parse_os_pretty_name(std::string_view os_release) {
  std::string value = find_value(os_release, "PRETTY_NAME", '=');
  if (value.empty()) return Reported<std::string>::missing("no PRETTY_NAME in /etc/os-release");
  return Reported<std::string>::of(value);
}

HostInfo query_host() {
  HostInfo host;
  struct utsname uts {};
  if (uname(&uts) == 0) {
    host.hostname = uts.nodename;
    host.architecture = uts.machine;
    host.kernel = uts.release;
  }
  host.cpu_model = parse_cpu_model(read_file("/proc/cpuinfo"));
  host.memory_bytes = parse_mem_total(read_file("/proc/meminfo"));
  host.os = parse_os_pretty_name(read_file("/etc/os-release"));

  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0)
    host.threads = Reported<int>::of(static_cast<int>(online));
  else
    host.threads = Reported<int>::missing("sysconf(_SC_NPROCESSORS_ONLN) failed");

  // Sockets and physical cores from sysfs topology, which VMs fill in even when
  // /proc/cpuinfo omits "physical id".
  std::vector<CoreId> cpus;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    fs::path topology = entry.path() / "topology";
    if (!fs::exists(topology / "core_id")) continue;  // offline CPU
    cpus.push_back(
        {read_int(topology / "physical_package_id", 0), read_int(topology / "core_id", 0)});
  }
  if (cpus.empty()) {
    host.sockets = Reported<int>::missing("no CPU topology in /sys/devices/system/cpu");
    host.cores = Reported<int>::missing("no CPU topology in /sys/devices/system/cpu");
  } else {
    CpuTopology topo = count_topology(cpus);
    host.sockets = Reported<int>::of(topo.sockets);
    host.cores = Reported<int>::of(topo.cores);
  }

  int nodes = 0;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      ++nodes;
  }
  if (nodes > 0)
    host.numa_nodes = Reported<int>::of(nodes);
  else
    host.numa_nodes = Reported<int>::missing("no /sys/devices/system/node (kernel without NUMA)");
  return host;
}

}  // namespace dlbench::sysinfo
