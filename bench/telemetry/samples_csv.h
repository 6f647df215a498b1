// Every sample as CSV, one row per tick: unix time, seconds since the first sample, then one
// column per metric headed "name [unit]". Levels and interval averages are written as read;
// counters as their rate over the interval ending at the row (empty on the first row); an
// empty cell is a missing reading.
#pragma once

#include <ostream>
#include <vector>

#include "bench/telemetry/metric.h"

namespace dlbench::telemetry {

void write_csv(std::ostream& out, const std::vector<MetricSpec>& metrics,
               const std::vector<Sample>& samples);

}  // namespace dlbench::telemetry
