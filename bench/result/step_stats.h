// Statistics of per-step times: what a benchmark reports next to its throughput.
#pragma once

#include <limits>
#include <vector>

namespace dlbench::result {

struct StepStats {
  int count = 0;
  double mean_ms = 0, median_ms = 0, p5_ms = 0, p95_ms = 0, min_ms = 0, max_ms = 0;
  // Coefficient of variation: stddev / mean (noise of the measurement); NaN for one step.
  double cv = std::numeric_limits<double>::quiet_NaN();
};

// Percentiles by linear interpolation between order statistics.
StepStats summarize_steps(std::vector<double> step_ms);
double percentile(const std::vector<double>& sorted, double q);

}  // namespace dlbench::result
