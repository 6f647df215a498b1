// The telemetry charts of the HTML report: per run, bars of GPU activity, clocks, power against
// its limit, temperature and the process's CPU and memory; then a timeline per metric over the
// measured phase (power with its limit as a dashed line). Metrics and order: telemetry_view.h.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/report/report_data.h"

namespace dlbench::report {

void telemetry_charts(const ReportData& data, nlohmann::json& charts);

}  // namespace dlbench::report
