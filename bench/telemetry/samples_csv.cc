#include "bench/telemetry/samples_csv.h"

#include <cmath>
#include <cstdio>

#include "bench/telemetry/summary.h"

namespace dlbench::telemetry {
namespace {

void write_number(std::ostream& out, double value, const char* format) {
  if (std::isnan(value)) return;
  char text[40];
  std::snprintf(text, sizeof text, format, value);
  out << text;
}

}  // namespace

void write_csv(std::ostream& out, const std::vector<MetricSpec>& metrics,
               const std::vector<Sample>& samples) {
  out << "unix_time_s,elapsed_s";
  for (const MetricSpec& m : metrics) out << ',' << m.name << " [" << m.unit << ']';
  out << '\n';
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& row = samples[i];
    write_number(out, static_cast<double>(row.tick.unix_ns) * 1e-9, "%.6f");
    out << ',';
    write_number(out,
                 static_cast<double>(row.tick.monotonic_ns - samples[0].tick.monotonic_ns) * 1e-9,
                 "%.6f");
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      out << ',';
      double value = row.values[m];
      if (metrics[m].kind == MetricKind::kCounter)
        value = i == 0 ? std::nan("") : interval_rate(metrics[m], samples[i - 1], row, m);
      write_number(out, value, "%.10g");
    }
    out << '\n';
  }
}

}  // namespace dlbench::telemetry
