// The monitored process tree: a root process and every descendant, read from /proc. Shared by
// the host source (CPU, RSS) and the NVML sources (GPU memory of our processes).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bench/telemetry/metric.h"

namespace dlbench::telemetry {

// What dlbench uses of /proc/<pid>/stat.
struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  std::uint64_t own_ticks = 0;       // utime + stime, in clock ticks
  std::uint64_t children_ticks = 0;  // cutime + cstime: children it has waited for
  std::uint64_t rss_pages = 0;
};

// Parses one /proc/<pid>/stat line; the command name may hold spaces and parentheses.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// Turns successive snapshots of a process tree into a CPU-tick count that only grows, counting
// each tick once: a live process's own ticks as they grow, and a reaped child's ticks through
// its parent's cutime/cstime minus what was already counted while the child was alive. That
// credit waits a few snapshots, because the parent's stat may be read just before it reaps the
// child and the child's just after. (A process reparented out of the tree before exiting loses
// its last interval.)
class TreeCpuAccount {
 public:
  // The first call sets the baseline. Returns the ticks counted since it.
  std::uint64_t update(const std::vector<ProcStat>& live);
  std::uint64_t ticks() const { return total_; }

 private:
  struct Seen {
    std::uint64_t own = 0;
    std::uint64_t children = 0;
    pid_t ppid = 0;
  };
  struct Credit {
    std::uint64_t ticks = 0;  // already counted, still to appear in the parent's cutime
    int age = 0;              // snapshots since the child vanished
  };
  struct Vanished {
    Seen seen;
    int age = 0;
  };
  std::unordered_map<pid_t, Seen> seen_;
  std::unordered_map<pid_t, Credit> credits_;  // by parent pid
  // Recently vanished processes: one that reappears (a snapshot missed it; /proc's children
  // lists are racy) continues from where it was instead of being counted anew.
  std::unordered_map<pid_t, Vanished> vanished_;
  std::uint64_t total_ = 0;
  bool started_ = false;
};

class ProcessTree {
 public:
  explicit ProcessTree(pid_t root);

  pid_t root() const { return root_; }
  // The root and its descendants, read once per tick however many sources ask; empty once the
  // root is gone. A zombie root (exited, not yet reaped) is still listed with its final times.
  const std::vector<ProcStat>& at(const Tick& tick);

 private:
  void collect_from_children_files();
  void collect_by_scanning_proc();

  pid_t root_;
  bool children_files_;  // /proc/<pid>/task/<tid>/children exists (CONFIG_PROC_CHILDREN)
  std::int64_t read_at_ns_ = -1;
  std::vector<ProcStat> processes_;
};

}  // namespace dlbench::telemetry
