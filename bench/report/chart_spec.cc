#include "bench/report/chart_spec.h"

#include <cmath>

namespace dlbench::report {

using nlohmann::json;

json chart_number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

std::string precision_color(const std::string& precision) {
  if (precision == "fp32") return "#2563eb";
  if (precision == "tf32") return "#f59e0b";
  if (precision == "fp16") return "#10b981";
  if (precision == "bf16") return "#ef4444";
  return "";
}

std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = char(text[0] - 'a' + 'A');
  return text;
}

bool any_finite(const std::vector<BarSet>& sets) {
  for (const BarSet& s : sets)
    for (double v : s.values)
      if (std::isfinite(v)) return true;
  return false;
}

json bar_chart(const std::string& section, const std::string& title, const std::string& y_title,
               const std::vector<std::string>& labels, const std::vector<BarSet>& sets,
               const std::string& value_suffix) {
  json datasets = json::array();
  for (const BarSet& s : sets) {
    json data = json::array();
    for (double v : s.values) data.push_back(chart_number(v));
    datasets.push_back({{"label", s.label}, {"data", data}});
    if (!s.color.empty()) datasets.back()["color"] = s.color;
  }
  return {{"section", section},  {"title", title},
          {"type", "bar"},       {"unit", y_title},
          {"labels", labels},    {"datasets", datasets},
          {"valueLabels", true}, {"valueSuffix", value_suffix}};
}

}  // namespace dlbench::report
