// The host as a deep-learning box: CPU, topology, memory, OS. Read from /proc and /sys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/reported.h"

namespace dlbench::sysinfo {

struct HostInfo {
  std::string hostname;
  std::string architecture;  // uname machine, e.g. x86_64
  Reported<std::string> cpu_model;
  Reported<int> sockets;
  Reported<int> cores;    // physical cores over all sockets
  Reported<int> threads;  // online logical CPUs
  Reported<int> numa_nodes;
  Reported<std::uint64_t> memory_bytes;
  Reported<std::string> os;  // PRETTY_NAME of /etc/os-release
  std::string kernel;        // uname release
};

HostInfo query_host();

// The pieces below are pure functions of file contents, so tests can feed them text.
struct CpuTopology {
  int sockets = 0;
  int cores = 0;
};
struct CoreId {
  int package = 0;
  int core = 0;
};
CpuTopology count_topology(const std::vector<CoreId>& cpus);
Reported<std::string> parse_cpu_model(std::string_view cpuinfo);
Reported<std::uint64_t> parse_mem_total(std::string_view meminfo);
Reported<std::string> parse_os_pretty_name(std::string_view os_release);

}  // namespace dlbench::sysinfo
