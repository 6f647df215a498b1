// The telemetry summary as a terminal table: one row per metric with mean, p95, max and unit,
// host metrics first, then one group per GPU. A missing metric shows "n/a (reason)".
#pragma once

#include <ostream>
#include <vector>

#include "bench/telemetry/nvml_source.h"
#include "bench/telemetry/summary.h"

namespace dlbench::cli {

void print_telemetry_table(std::ostream& out, const telemetry::Summary& summary,
                           const std::vector<telemetry::GpuIdentity>& gpus);

}  // namespace dlbench::cli
