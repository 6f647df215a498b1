#include "cli/noise_rows.h"

#include <cmath>
#include <cstdio>

#include "bench/result/repeats.h"
#include "cli/number_text.h"

namespace dlbench::cli {
std::string median_note(const result::RunResult& r) {
  if (!r.repeats) return "";
  return " (median of " + count_text(static_cast<long long>(r.repeats->runs.size()), "repeat") +
         ")";
}

void add_repeats_row(Section& section, const result::RunResult& r) {
  if (!r.repeats) return;
  std::vector<double> rates;
  for (const result::Repeat& each : r.repeats->runs) rates.push_back(each.throughput);
  const result::SpreadStats s = result::spread_stats(rates);
  std::string text = "min " + fixed(s.min, 2) + ", max " + fixed(s.max, 2) + " " + r.sample_unit +
                     "/s: range " + fixed(100 * s.range, 1) + " % of the median";
  if (std::isfinite(s.stddev)) text += ", stddev " + fixed(100 * s.stddev, 1) + " %";
  text +=
      "; each built, warmed up and measured anew; step times, memory and telemetry are "
      "repeat " +
      std::to_string(r.repeats->shown + 1) + "'s";
  section.row("Repeats", text);
}

void add_warning_rows(Section& section, const result::RunResult& r) {
  for (const result::NoiseWarning& w : result::noise_warnings(r))
    section.row("Warning", w.text + " [" + w.code + "]");
}

}  // namespace dlbench::cli
