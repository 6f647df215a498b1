// Host sources from /proc: the monitored process tree (CPU, RSS, peak RSS) and the whole system
// (CPU busy, memory used).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "bench/telemetry/process_tree.h"
#include "bench/telemetry/source.h"

namespace dlbench::telemetry {

// process.cpu (% of one core, top-style: children included), process.rss, process.rss_peak,
// process.count.
class ProcessTreeSource : public Source {
 public:
  explicit ProcessTreeSource(std::shared_ptr<ProcessTree> tree);

  const std::vector<MetricSpec>& metrics() const override { return metrics_; }
  void begin() override;
  void read(const Tick& tick, Readings& out) override;

 private:
  std::shared_ptr<ProcessTree> tree_;
  std::vector<MetricSpec> metrics_;
  TreeCpuAccount cpu_;
  std::uint64_t peak_rss_ = 0;
  double seconds_per_tick_;
  std::uint64_t page_size_;
};

// Jiffies of /proc/stat's "cpu" line: busy (user, nice, system, irq, softirq, steal) and total.
struct CpuTimes {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};
std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view proc_stat);

struct MemInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t available_bytes = 0;
};
std::optional<MemInfo> parse_meminfo(std::string_view meminfo);

// system.cpu (% of all CPUs), system.memory_used, system.memory_total.
class SystemSource : public Source {
 public:
  SystemSource();

  const std::vector<MetricSpec>& metrics() const override { return metrics_; }
  void begin() override;
  void read(const Tick& tick, Readings& out) override;
  void end(Readings& window) override;

 private:
  void read_memory(Readings& out);

  std::vector<MetricSpec> metrics_;
  std::optional<CpuTimes> first_, previous_;
  std::uint64_t min_span_jiffies_ = 1;
};

}  // namespace dlbench::telemetry
