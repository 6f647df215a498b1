#include "cli/scale_table.h"

#include <cstdio>
#include <string>

#include "bench/result/replica_steps.h"

namespace dlbench::cli {

void print_scale_table(std::ostream& out, const std::vector<result::RunResult>& results,
                       const std::vector<result::ScalingPoint>& points) {
  const result::RunConfig& c = results.front().config;
  out << c.model << " " << to_string(c.mode) << " " << to_string(c.precision) << ", batch "
      << *c.batch << " per GPU\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %4s  %12s  %14s  %8s  %10s  %12s  %9s  %10s  %s\n", "GPUs",
                "global batch", "samples/s", "speedup", "efficiency", "step ms p50", "mean",
                "slow steps", "replicas");
  out << line;
  // Efficiency follows the mean step, the median hides a few slow ones: the slow steps (over
  // 1.1x the median on some replica) and who started them late say where the difference went.
  std::vector<std::string> stragglers;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const result::RunResult& r = results[i];
    const result::ScalingPoint& p = points[i];
    const char* replicas = !r.data_parallel                      ? "-"
                           : r.data_parallel->replicas_identical ? "identical"
                                                                 : "DIFFERENT";
    std::string slow = "-";
    if (r.data_parallel && !r.data_parallel->replica_steps.empty()) {
      const result::Stragglers s = result::run_stragglers(r.data_parallel->replica_steps,
                                                          r.data_parallel->replica_steps_origin_ms,
                                                          r.telemetry ? &*r.telemetry : nullptr);
      slow = result::slow_steps_cell(s);
      if (!s.slow.empty())
        stragglers.push_back(std::to_string(p.gpus) + " GPUs: " + result::stragglers_text(s, 3));
    }
    std::snprintf(line, sizeof line,
                  "  %4d  %12lld  %14.1f  %7.2fx  %9.1f%%  %12.1f  %9.1f  %10s  %s\n", p.gpus,
                  static_cast<long long>(*c.batch * p.gpus), p.throughput, p.speedup,
                  100 * p.efficiency, r.step.median_ms, r.step.mean_ms, slow.c_str(), replicas);
    out << line;
  }
  for (const std::string& s : stragglers) out << "  " << s << "\n";
  for (const result::RunResult& r : results)
    if (r.data_parallel && !r.data_parallel->interconnect.empty()) {
      out << "  interconnect: " << r.data_parallel->interconnect << "\n";
      break;
    }
  out << "  efficiency = (samples/s per GPU) / (samples/s per GPU with " << points.front().gpus
      << (points.front().gpus == 1 ? " GPU" : " GPUs") << ")\n";
}

}  // namespace dlbench::cli
