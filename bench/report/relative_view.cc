#include "bench/report/relative_view.h"

#include <cmath>

#include "bench/report/chart_spec.h"

namespace dlbench::report {

Table relative_table(const RelativePerformance& rel) {
  Table t{"relative",
          "Relative to " + rel.reference,
          "ratio = this machine's throughput / the reference's for the same workload (model, "
          "mode, precision, batch, input, framework, replicas); reference = 1" +
              (rel.reference_machine.empty() ? std::string() : " (" + rel.reference_machine + ")") +
              "; geometric mean over the workloads both have",
          {"workload", "samples/s", "reference samples/s", "ratio"},
          {}};
  for (const RelativeRow& r : rel.rows)
    t.rows.push_back(
        {r.workload, fixed(r.throughput, 2), fixed(r.reference, 2), fixed(r.ratio, 2)});
  if (!rel.rows.empty()) t.rows.push_back({"geometric mean", "", "", fixed(rel.geometric_mean, 2)});
  for (const std::string& w : rel.unmatched) t.rows.push_back({w, "", "no reference run", ""});
  return t;
}

nlohmann::json relative_chart(const RelativePerformance& rel) {
  std::vector<std::string> labels;
  BarSet ratios{"ratio (" + rel.reference + " = 1)", {}};
  BarSet mean{"geometric mean " + fixed(rel.geometric_mean, 2) + "x", {}, "#444444"};
  for (const RelativeRow& r : rel.rows) {
    labels.push_back(r.workload);
    ratios.values.push_back(r.ratio);
    mean.values.push_back(rel.geometric_mean);
  }
  nlohmann::json chart =
      bar_chart("Relative performance", "Throughput relative to " + rel.reference + " = 1", "ratio",
                labels, {ratios, mean}, "x");
  chart["datasets"][1]["type"] = "line";
  chart["datasets"][1]["dashed"] = true;
  chart["tall"] = true;  // workload labels are long
  return chart;
}

}  // namespace dlbench::report
