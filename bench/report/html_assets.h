// The HTML report's own style sheet and script (Chart.js itself is embedded from chart_js.h).
#pragma once

namespace dlbench::report {

// The page's CSS.
const char* report_style();
// Draws every chart of the embedded JSON data (charts.h) with Chart.js, each bar labelled with
// its value by a small plugin of our own, then records on <body> what the browser test reads:
// data-charts-total, data-charts-drawn (canvases with pixels), data-value-labels (values
// written on bars), data-js-errors and data-resources (network fetches: none).
const char* report_script();

}  // namespace dlbench::report
