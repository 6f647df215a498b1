// The telemetry summary as JSON (schema "dlbench.telemetry/1"). A value a metric does not have
// is null and the metric's "unavailable" says why, as in `dlbench info --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/telemetry/nvml_source.h"
#include "bench/telemetry/summary.h"

namespace dlbench::telemetry {

nlohmann::json to_json(const MetricSummary& metric);
nlohmann::json to_json(const Summary& summary);
nlohmann::json to_json(const GpuIdentity& gpu);

}  // namespace dlbench::telemetry
