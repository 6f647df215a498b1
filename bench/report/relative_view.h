// --relative-to in a report: the table every format shows and the HTML report's chart.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/report/relative.h"
#include "bench/report/report_data.h"

namespace dlbench::report {

// "relative": a row per workload both sides have, then "geometric mean", then a row per
// workload the reference lacks (ratio empty, "no reference run").
Table relative_table(const RelativePerformance& relative);

// A bar per workload (ratio, reference = 1) and the geometric mean as a dashed line.
nlohmann::json relative_chart(const RelativePerformance& relative);

}  // namespace dlbench::report
