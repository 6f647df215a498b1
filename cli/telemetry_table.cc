#include "cli/telemetry_table.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace dlbench::cli {
namespace {

using telemetry::MetricKind;
using telemetry::MetricSummary;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

struct Row {
  std::string metric, mean, p95, max, unit;
};

// Bytes in MiB or GiB and rates in MB/s or GB/s, chosen once per row so its columns compare.
struct Display {
  double divisor = 1;
  std::string unit;
  const char* format = "%.1f";
};

Display display_for(const MetricSummary& m) {
  const std::string& unit = m.spec.unit;
  double largest = m.max.available() ? m.max.value() : 0;
  if (unit == "B")
    return largest >= kGiB ? Display{kGiB, "GiB", "%.2f"} : Display{kMiB, "MiB", "%.1f"};
  if (unit == "B/s")
    return largest >= 1e9 ? Display{1e9, "GB/s", "%.2f"} : Display{1e6, "MB/s", "%.1f"};
  if (unit == "MHz" || unit == "C" || unit == "processes") return {1, unit, "%.0f"};
  if (unit == "cores") return {1, unit, "%.2f"};
  return {1, unit, "%.1f"};
}

std::string format(const Reported<double>& value, const Display& d) {
  if (!value.available()) return "";
  char text[48];
  std::snprintf(text, sizeof text, d.format, value.value() / d.divisor);
  return text;
}

std::string total_text(const MetricSummary& m) {
  if (!m.total.available()) return "";
  double total = m.total.value();
  char text[64];
  if (m.spec.total_unit == "B")  // transfers, so decimal like their GB/s
    std::snprintf(text, sizeof text, "%.2f GB", total / 1e9);
  else if (m.spec.total_unit == "J" && total >= 1e4)
    std::snprintf(text, sizeof text, "%.2f kJ", total / 1e3);
  else
    std::snprintf(text, sizeof text, "%.1f %s", total, m.spec.total_unit.c_str());
  return std::string(text) + " total";
}

Row row_for(const MetricSummary& m, const std::string& name) {
  Row row;
  row.metric = name;
  if (!m.available()) {
    row.mean = "n/a (" + m.reason + ")";
    return row;
  }
  if (m.spec.kind == MetricKind::kBitmask) {
    std::string flags;
    for (const std::string& f : telemetry::bit_names(m.spec, m.mask.value()))
      flags += (flags.empty() ? "" : ",") + f;
    row.mean = flags.empty() ? "none" : flags;
    row.unit = "ORed";
    return row;
  }
  Display d = display_for(m);
  row.mean = format(m.mean, d);
  row.p95 = format(m.p95, d);
  row.max = format(m.max, d);
  row.unit = d.unit;
  if (m.spec.kind == MetricKind::kCounter && m.spec.total_unit == "s")
    row.unit = "% of a core (" + total_text(m).substr(0, total_text(m).find(" total")) + " CPU)";
  else if (m.spec.kind == MetricKind::kCounter)
    row.unit += " (" + total_text(m) + ")";
  else if (m.spec.name == "system.cpu")
    row.unit = "% of all CPUs";
  return row;
}

void print_rows(std::ostream& out, const std::vector<Row>& rows) {
  std::size_t w[4] = {6, 4, 3, 3};
  for (const Row& r : rows) {
    w[0] = std::max(w[0], r.metric.size());
    // A long "n/a (...)" runs on; it does not widen the number columns.
    if (!r.p95.empty()) w[1] = std::max(w[1], r.mean.size());
    w[2] = std::max(w[2], r.p95.size());
    w[3] = std::max(w[3], r.max.size());
  }
  auto pad_right = [](const std::string& s, std::size_t n) {
    return s + std::string(n > s.size() ? n - s.size() : 0, ' ');
  };
  auto pad_left = [](const std::string& s, std::size_t n) {
    return std::string(n > s.size() ? n - s.size() : 0, ' ') + s;
  };
  for (const Row& r : rows) {
    std::string line = "  " + pad_right(r.metric, w[0]) + "  ";
    if (r.p95.empty() && r.max.empty()) {
      line += r.mean;
      if (!r.unit.empty()) line += "  " + r.unit;
    } else {
      line += pad_left(r.mean, w[1]) + "  " + pad_left(r.p95, w[2]) + "  " + pad_left(r.max, w[3]) +
              "  " + r.unit;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

}  // namespace

void print_telemetry_table(std::ostream& out, const telemetry::Summary& summary,
                           const std::vector<telemetry::GpuIdentity>& gpus) {
  std::vector<Row> host{{"metric", "mean", "p95", "max", "unit"}};
  for (const MetricSummary& m : summary.metrics)
    if (m.spec.name.rfind("gpu", 0) != 0) host.push_back(row_for(m, m.spec.name));
  out << "Host\n";
  print_rows(out, host);
  for (const telemetry::GpuIdentity& gpu : gpus) {
    std::string prefix = telemetry::gpu_prefix(gpu.index);
    std::vector<Row> rows{{"metric", "mean", "p95", "max", "unit"}};
    for (const MetricSummary& m : summary.metrics)
      if (m.spec.name.rfind(prefix, 0) == 0)
        rows.push_back(row_for(m, m.spec.name.substr(prefix.size())));
    out << "\nGPU " << gpu.index << ": " << gpu.name;
    if (gpu.pci_bus_id.available()) out << " (" << gpu.pci_bus_id.value() << ")";
    out << "\n";
    print_rows(out, rows);
  }
  if (!summary.notes.empty()) {
    out << "\nNotes\n";
    for (const std::string& note : summary.notes) out << "  " << note << "\n";
  }
}

}  // namespace dlbench::cli
