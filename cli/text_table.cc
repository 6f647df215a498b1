#include "cli/text_table.h"

#include <algorithm>
#include <cstdio>

namespace dlbench::cli {

void Section::print(std::ostream& out) const {
  std::size_t width = 0;
  for (const auto& [label, value] : rows_) width = std::max(width, label.size());
  out << title_ << "\n";
  for (const auto& [label, value] : rows_)
    out << "  " << label << std::string(width - label.size() + 2, ' ') << value << "\n";
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

}  // namespace dlbench::cli
