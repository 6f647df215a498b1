// The charts of an HTML report as data: each chart says its kind, title, unit, labels and
// datasets, and the page's small script draws them with Chart.js. Computing them here keeps
// the numbers testable in C++ and the script generic.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/report/report_data.h"

namespace dlbench::report {

// [{"section", "title", "type": "bar"|"line", "unit" (the y axis title, with its unit),
// "labels", "datasets": [{"label", "data", "color"?, "type": "line"? (a line in a bar chart,
// such as the power limit), "dashed"?}], "valueLabels"? (each bar written with its value,
// "valueSuffix" after it), "tall"? (per-run charts with long labels)}]; line charts have {x, y}
// points in seconds. Charts without data are left out. Order: scaling, training and inference
// throughput (one chart per mode), frameworks, speedups over strict FP32 and over TF32, memory,
// energy, then telemetry (telemetry_charts.h).
// Multi-GPU scaling charts come first: lines over replica counts ("xTitle"), efficiency on a
// second axis ("y2Unit"; datasets with "axis": "y2"), drawn into the page element whose id is
// their "target" (scaling_chart_target of the group's index in scaling_groups(data.runs)).
nlohmann::json report_charts(const ReportData& data);

// The id of the element that holds the chart of the i-th scaling group.
std::string scaling_chart_target(std::size_t group_index);

}  // namespace dlbench::report
