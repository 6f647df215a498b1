// cgroup v2 limits and usage of the monitored process's cgroup: what a container or a batch
// scheduler allows it, which is often less than the machine has.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bench/telemetry/source.h"

namespace dlbench::telemetry {

// The pure pieces, fed file contents by tests.
// "0::/user.slice/x" in /proc/<pid>/cgroup -> "/user.slice/x".
std::optional<std::string> parse_cgroup_v2_path(std::string_view proc_cgroup);
struct CgroupMount {
  std::string root;         // the part of the hierarchy the mount shows ("/" mostly)
  std::string mount_point;  // "/sys/fs/cgroup"
};
// The cgroup2 line of /proc/self/mountinfo.
std::optional<CgroupMount> parse_cgroup2_mount(std::string_view mountinfo);
// memory.max: bytes, nullopt for "max" (no limit).
std::optional<std::uint64_t> parse_memory_max(std::string_view text);
// cpu.max "quota period": cores (quota / period), nullopt for "max".
std::optional<double> parse_cpu_max(std::string_view text);
// cpu.stat usage_usec.
std::optional<std::uint64_t> parse_cpu_usage_usec(std::string_view cpu_stat);

// cgroup.memory_limit, cgroup.memory_used, cgroup.cpu_limit (cores), cgroup.cpu (% of one
// core, everything in the cgroup). Limits are the tightest along the path to the root.
class CgroupSource : public Source {
 public:
  explicit CgroupSource(pid_t pid);

  const std::vector<MetricSpec>& metrics() const override { return metrics_; }
  void begin() override;
  void read(const Tick& tick, Readings& out) override;

 private:
  std::vector<MetricSpec> metrics_;
  pid_t pid_;
  std::string unavailable_;       // why there is no cgroup v2 to read, empty when there is
  std::string directory_;         // the process's cgroup directory
  std::string memory_directory_;  // where the tightest memory limit is (usage read there)
  std::optional<std::uint64_t> memory_limit_;
  std::optional<double> cpu_limit_;
};

}  // namespace dlbench::telemetry
