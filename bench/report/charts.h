// The charts of an HTML report as data: each chart says its kind, title, unit, labels and
// datasets, and the page's small script draws them with Chart.js. Computing them here keeps
// the numbers testable in C++ and the script generic.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/report/report_data.h"

namespace dlbench::report {

// [{"section", "title", "type": "bar"|"line", "unit", "labels", "datasets": [{"label",
// "data"}]}]; line charts have {x, y} points in seconds. Charts without data are left out.
nlohmann::json report_charts(const ReportData& data);

}  // namespace dlbench::report
