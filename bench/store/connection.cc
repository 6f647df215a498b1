#include "bench/store/connection.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dlbench::store {

SqlValue sql_int(long long v) {
  return std::to_string(v);
}

SqlValue sql_real(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);  // round-trips every double
  return std::string(text);
}

SqlValue sql_real(const std::optional<double>& v) {
  return v ? sql_real(*v) : SqlValue(std::nullopt);
}

SqlValue sql_text(const std::string& v) {
  return v;
}

long long to_int(const SqlValue& v, long long fallback) {
  return v ? std::strtoll(v->c_str(), nullptr, 10) : fallback;
}

double to_real(const SqlValue& v, double fallback) {
  return v ? std::strtod(v->c_str(), nullptr) : fallback;
}

std::optional<double> to_optional_real(const SqlValue& v) {
  if (!v) return std::nullopt;
  return std::strtod(v->c_str(), nullptr);
}

std::string to_text(const SqlValue& v) {
  return v.value_or("");
}

}  // namespace dlbench::store
