#include "bench/telemetry/procfs_source.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "bench/telemetry/proc_file.h"

namespace dlbench::telemetry {
namespace {

enum TreeMetric : std::size_t { kTreeCpu, kTreeRss, kTreeRssPeak, kTreeCount };
enum SystemMetric : std::size_t { kSystemCpu, kSystemMemoryUsed, kSystemMemoryTotal };

const char* kTreeGone = "the monitored process tree has exited";
// Shortest span of /proc/stat readings that gives a system CPU % (5 jiffies per CPU at 100 Hz).
constexpr double kMinSystemCpuSpanS = 0.05;

}  // namespace

ProcessTreeSource::ProcessTreeSource(std::shared_ptr<ProcessTree> tree)
    : tree_(std::move(tree)),
      seconds_per_tick_(1.0 / static_cast<double>(sysconf(_SC_CLK_TCK))),
      page_size_(static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE))) {
  // CPU seconds per second x 100 = % of one core.
  metrics_ = {
      counter_metric("process.cpu", "CPU of the process tree, children included (100 % = one core)",
                     "%", "s", 100.0),
      level_metric("process.rss", "resident memory of the process tree", "B"),
      level_metric("process.rss_peak", "peak resident memory of the process tree", "B"),
      level_metric("process.count", "processes in the tree", "processes"),
  };
}

void ProcessTreeSource::begin() {
  cpu_ = TreeCpuAccount();
  peak_rss_ = 0;
}

void ProcessTreeSource::read(const Tick& tick, Readings& out) {
  const std::vector<ProcStat>& tree = tree_->at(tick);
  if (tree.empty()) {
    for (std::size_t m = 0; m < metrics_.size(); ++m) out.missing(m, kTreeGone);
    return;
  }
  out.set(kTreeCpu, static_cast<double>(cpu_.update(tree)) * seconds_per_tick_);
  std::uint64_t rss = 0, hwm = 0;
  std::string status;
  for (const ProcStat& p : tree) {
    rss += p.rss_pages * page_size_;
    // The kernel's high-water mark catches peaks between ticks (absent for zombies).
    if (read_small_file("/proc/" + std::to_string(p.pid) + "/status", status))
      hwm = std::max(hwm, find_number(status, "VmHWM", true).value_or(0));
  }
  peak_rss_ = std::max({peak_rss_, rss, hwm});
  out.set(kTreeRss, static_cast<double>(rss));
  out.set(kTreeRssPeak, static_cast<double>(peak_rss_));
  out.set(kTreeCount, static_cast<double>(tree.size()));
}

std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view proc_stat) {
  if (proc_stat.substr(0, 4) != "cpu ") return std::nullopt;
  std::uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal
  std::size_t at = 4;
  int found = 0;
  for (; found < 8; ++found) {
    at = proc_stat.find_first_not_of(' ', at);
    if (at == std::string_view::npos) break;
    auto [ptr, ec] =
        std::from_chars(proc_stat.data() + at, proc_stat.data() + proc_stat.size(), v[found]);
    if (ec != std::errc()) break;
    at = static_cast<std::size_t>(ptr - proc_stat.data());
  }
  if (found < 5) return std::nullopt;
  // guest time is already part of user time, so it is not added again.
  CpuTimes t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  t.total = t.busy + v[3] + v[4];
  return t;
}

std::optional<MemInfo> parse_meminfo(std::string_view meminfo) {
  auto total = find_number(meminfo, "MemTotal", true);
  auto available = find_number(meminfo, "MemAvailable", true);
  if (!total || !available) return std::nullopt;
  return MemInfo{*total, *available};
}

SystemSource::SystemSource() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
  min_span_jiffies_ = static_cast<std::uint64_t>(
      std::max(1.0, kMinSystemCpuSpanS * static_cast<double>(hz) * static_cast<double>(cpus)));
  metrics_ = {
      interval_metric("system.cpu", "CPU busy over all CPUs (100 % = every CPU)", "%"),
      level_metric("system.memory_used", "host memory in use (total - available)", "B"),
      level_metric("system.memory_total", "host memory", "B"),
  };
}

void SystemSource::begin() {
  first_.reset();
  previous_.reset();
}

void SystemSource::read(const Tick&, Readings& out) {
  std::string text;
  std::optional<CpuTimes> cpu;
  if (read_small_file("/proc/stat", text)) cpu = parse_proc_stat_cpu(text);
  if (!cpu) {
    out.missing(kSystemCpu, "/proc/stat has no readable cpu line");
  } else if (!previous_) {
    out.missing(kSystemCpu, "system CPU % needs two readings of /proc/stat");
  } else if (cpu->total < previous_->total + min_span_jiffies_) {
    // Jiffies are 10 ms: over a sliver of an interval the ratio is mostly rounding. Keep the
    // earlier reading, so the next value spans the whole time.
    out.missing(kSystemCpu, "too little CPU time since the previous reading to measure");
    cpu.reset();
  } else {
    out.set(kSystemCpu, 100.0 * static_cast<double>(cpu->busy - previous_->busy) /
                            static_cast<double>(cpu->total - previous_->total));
  }
  if (cpu) {
    if (!first_) first_ = cpu;
    previous_ = cpu;
  }
  read_memory(out);
}

void SystemSource::read_memory(Readings& out) {
  std::string text;
  std::optional<MemInfo> memory;
  if (read_small_file("/proc/meminfo", text)) memory = parse_meminfo(text);
  if (memory) {
    out.set(kSystemMemoryUsed, static_cast<double>(memory->total_bytes - memory->available_bytes));
    out.set(kSystemMemoryTotal, static_cast<double>(memory->total_bytes));
  } else {
    out.missing(kSystemMemoryUsed, "/proc/meminfo has no MemTotal/MemAvailable");
    out.missing(kSystemMemoryTotal, "/proc/meminfo has no MemTotal/MemAvailable");
  }
}

void SystemSource::end(Readings& window) {
  if (first_ && previous_ && previous_->total > first_->total)
    window.set(kSystemCpu, 100.0 * static_cast<double>(previous_->busy - first_->busy) /
                               static_cast<double>(previous_->total - first_->total));
}

}  // namespace dlbench::telemetry
