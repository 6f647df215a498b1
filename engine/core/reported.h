// Reported<T>: a measured or queried value, or the reason it is unavailable. A metric that a
// device, driver or build does not provide is reported as missing with why, never as 0.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace dlbench {

template <class T>
class Reported {
 public:
  Reported() : reason_("not queried") {}
  static Reported of(T value) {
    Reported r;
    r.value_ = std::move(value);
    r.reason_.clear();
    return r;
  }
  static Reported missing(std::string reason) {
    Reported r;
    r.reason_ = std::move(reason);
    return r;
  }

  bool available() const { return value_.has_value(); }
  const T& value() const { return *value_; }
  T value_or(T fallback) const { return value_.value_or(std::move(fallback)); }
  // Empty when available.
  const std::string& reason() const { return reason_; }

 private:
  std::optional<T> value_;
  std::string reason_;
};

}  // namespace dlbench
