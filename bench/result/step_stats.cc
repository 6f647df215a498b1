#include "bench/result/step_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dlbench::result {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

StepStats summarize_steps(std::vector<double> ms) {
  StepStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.count = static_cast<int>(ms.size());
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / s.count;
  s.median_ms = percentile(ms, 0.5);
  s.p5_ms = percentile(ms, 0.05);
  s.p95_ms = percentile(ms, 0.95);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  // One step has no spread: its CV is unknown, not 0 (which would read as a quiet machine).
  if (s.count < 2) return s;
  double var = 0;
  for (double x : ms) var += (x - s.mean_ms) * (x - s.mean_ms);
  var /= s.count - 1;
  s.cv = s.mean_ms > 0 ? std::sqrt(var) / s.mean_ms : 0;
  return s;
}

}  // namespace dlbench::result
