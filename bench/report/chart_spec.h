// Building blocks of the charts' JSON (see charts.h for the format the page's script draws).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlbench::report {

// One dataset of a bar chart: its legend label and a value per category (NaN = no bar).
struct BarSet {
  std::string label;
  std::vector<double> values;
  std::string color = "";  // "#rrggbb"; empty: the page's palette by position
};

// One colour per precision (fp32, tf32, fp16, bf16), the same on every chart; "" for others.
std::string precision_color(const std::string& precision);

// A number for the chart data; null for NaN and infinities.
nlohmann::json chart_number(double v);
bool any_finite(const std::vector<BarSet>& sets);
// "Board power" from "board power": chart titles start with a capital.
std::string capitalized(std::string text);

// Per-run charts (one bar group per run) have long category labels: they get a taller box.
// A bar chart, full page width, each bar labelled with its value (value_suffix after it, such
// as "x" for a speedup). y_title is the axis title with its unit: "throughput (images/s)".
nlohmann::json bar_chart(const std::string& section, const std::string& title,
                         const std::string& y_title, const std::vector<std::string>& labels,
                         const std::vector<BarSet>& sets, const std::string& value_suffix = "");

}  // namespace dlbench::report
