// Numbers in the terminal's words: a count with its noun in the right number ("1 step",
// "3 steps", "1 GPU"), and a value with significant digits where fixed decimals would hide it
// (a loss of 1.2e-05 is not "0.0000").
#pragma once

#include <cstdio>
#include <string>

namespace dlbench::cli {

// `plural` when the noun does not just take an "s".
inline std::string count_text(long long n, const std::string& noun,
                              const std::string& plural = "") {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

// "%.*f": fixed(3.14159, 2) is "3.14".
inline std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// "%.5g": 1.3064, 0.8725, 1.2346e-05.
inline std::string significant(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

}  // namespace dlbench::cli
