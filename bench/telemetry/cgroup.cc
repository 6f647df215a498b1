#include "bench/telemetry/cgroup.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "bench/telemetry/proc_file.h"

namespace dlbench::telemetry {
namespace {

enum CgroupMetric : std::size_t { kMemoryLimit, kMemoryUsed, kCpuLimit, kCpuUsed };

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

template <class Int>
std::optional<Int> to_int(std::string_view text) {
  Int value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::string> read_text(const std::string& path) {
  std::string text;
  if (!read_small_file(path, text)) return std::nullopt;
  return text;
}

std::string parent_of(const std::string& dir) {
  auto slash = dir.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : dir.substr(0, slash);
}

}  // namespace

std::optional<std::string> parse_cgroup_v2_path(std::string_view proc_cgroup) {
  std::istringstream lines{std::string(proc_cgroup)};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return std::nullopt;
}

std::optional<CgroupMount> parse_cgroup2_mount(std::string_view mountinfo) {
  // "id parent major:minor root mount-point options [optional...] - fstype source ..."
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device;
    CgroupMount mount;
    if (fields >> id >> parent >> device >> mount.root >> mount.mount_point) return mount;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_memory_max(std::string_view text) {
  return to_int<std::uint64_t>(trim(text));
}

std::optional<double> parse_cpu_max(std::string_view text) {
  text = trim(text);
  auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto quota = to_int<std::uint64_t>(text.substr(0, space));
  auto period = to_int<std::uint64_t>(text.substr(space + 1));
  if (!quota || !period || *period == 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<std::uint64_t> parse_cpu_usage_usec(std::string_view cpu_stat) {
  std::istringstream lines{std::string(cpu_stat)};
  for (std::string key, value; lines >> key >> value;)
    if (key == "usage_usec") return to_int<std::uint64_t>(value);
  return std::nullopt;
}

CgroupSource::CgroupSource(pid_t pid) : pid_(pid) {
  metrics_ = {
      level_metric("cgroup.memory_limit", "memory limit of the cgroup (tightest on its path)", "B"),
      level_metric("cgroup.memory_used", "memory charged to the limiting cgroup", "B"),
      level_metric("cgroup.cpu_limit", "CPU quota of the cgroup (tightest on its path)", "cores"),
      counter_metric("cgroup.cpu", "CPU of everything in the cgroup (100 % = one core)", "%", "s",
                     100.0),
  };
}

void CgroupSource::begin() {
  unavailable_.clear();
  memory_limit_.reset();
  cpu_limit_.reset();
  auto path = read_text("/proc/" + std::to_string(pid_) + "/cgroup");
  std::optional<std::string> relative = path ? parse_cgroup_v2_path(*path) : std::nullopt;
  auto mountinfo = read_text("/proc/self/mountinfo");
  std::optional<CgroupMount> mount = mountinfo ? parse_cgroup2_mount(*mountinfo) : std::nullopt;
  if (!relative) {
    unavailable_ = "the process is in no cgroup v2 hierarchy (cgroup v1 only)";
    return;
  }
  if (!mount) {
    unavailable_ = "cgroup v2 is not mounted here";
    return;
  }
  std::string inside = *relative;
  if (mount->root != "/" && inside.rfind(mount->root, 0) == 0)
    inside = inside.substr(mount->root.size());
  directory_ = mount->mount_point + (inside == "/" ? "" : inside);
  if (access(directory_.c_str(), R_OK) != 0) {
    unavailable_ = "the cgroup directory " + directory_ + " is not visible here";
    return;
  }
  // A limit anywhere above binds too: keep the tightest from the leaf up to the mount.
  memory_directory_ = directory_;
  for (std::string dir = directory_;; dir = parent_of(dir)) {
    if (auto text = read_text(dir + "/memory.max")) {
      auto limit = parse_memory_max(*text);
      if (limit && (!memory_limit_ || *limit < *memory_limit_)) {
        memory_limit_ = limit;
        memory_directory_ = dir;
      }
    }
    if (auto text = read_text(dir + "/cpu.max")) {
      auto cores = parse_cpu_max(*text);
      if (cores && (!cpu_limit_ || *cores < *cpu_limit_)) cpu_limit_ = cores;
    }
    if (dir.size() <= mount->mount_point.size() || dir == "/") break;
  }
}

void CgroupSource::read(const Tick&, Readings& out) {
  if (!unavailable_.empty()) {
    for (std::size_t m = 0; m < metrics_.size(); ++m) out.missing(m, unavailable_);
    return;
  }
  std::string text;
  bool memory_controller = read_small_file(memory_directory_ + "/memory.current", text);
  if (memory_controller) {
    if (auto used = parse_memory_max(text)) out.set(kMemoryUsed, static_cast<double>(*used));
  } else {
    out.missing(kMemoryUsed, "the memory controller is not enabled for this cgroup v2");
  }
  if (memory_limit_)
    out.set(kMemoryLimit, static_cast<double>(*memory_limit_));
  else
    out.missing(kMemoryLimit, memory_controller ? "no memory limit (memory.max is 'max')"
                                                : "the memory controller is not enabled for "
                                                  "this cgroup v2");
  if (cpu_limit_)
    out.set(kCpuLimit, *cpu_limit_);
  else
    out.missing(kCpuLimit, "no CPU limit (cpu.max is 'max' or absent)");
  std::optional<std::uint64_t> usage;
  if (read_small_file(directory_ + "/cpu.stat", text)) usage = parse_cpu_usage_usec(text);
  if (usage)
    out.set(kCpuUsed, static_cast<double>(*usage) * 1e-6);
  else
    out.missing(kCpuUsed, "cpu.stat has no usage_usec in " + directory_);
}

}  // namespace dlbench::telemetry
