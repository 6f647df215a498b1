// Chart.js (Debian's libjs-chart.js, MIT licence), embedded at build time by CMake so that a
// report opens offline.
#pragma once

#include <string_view>

namespace dlbench::report {

std::string_view chart_js_source();
std::string_view chart_js_version();  // "3.9.1"

}  // namespace dlbench::report
