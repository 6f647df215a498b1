// A suite file's text, checked before TOML sees it: at most kMaxSuiteBytes, UTF-8 without NUL
// bytes, and nested at most kMaxSuiteDepth levels deep. toml++ parses (and destroys) nested
// tables recursively, so a key of 50,000 dotted parts exhausted the stack (exit 139); the
// pre-scan here is one pass without recursion, and a suite needs two or three levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dlbench::suite {

constexpr std::size_t kMaxSuiteBytes = std::size_t{1} << 20;
constexpr int kMaxSuiteDepth = 64;

// Throws Error: resource when the file cannot be read; usage (naming the file, and the line
// where there is one) when it is larger than kMaxSuiteBytes or fails check_suite_text.
std::string read_suite_text(const std::string& path);

// Throws Error(kUsage) "FILE:LINE: ..." for a NUL byte, a byte sequence that is not UTF-8, or
// nesting deeper than kMaxSuiteDepth: the parts of dotted keys and table headers, arrays and
// inline tables, counted together. Anything else that is not TOML is left to the parser.
void check_suite_text(const std::string& file, std::string_view text);

}  // namespace dlbench::suite
