// Two-column "label  value" sections for terminal output, aligned per section.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace dlbench::cli {

class Section {
 public:
  explicit Section(std::string title) : title_(std::move(title)) {}
  Section& row(std::string label, std::string value) {
    rows_.emplace_back(std::move(label), std::move(value));
    return *this;
  }
  void print(std::ostream& out) const;

 private:
  std::string title_;
  std::vector<std::pair<std::string, std::string>> rows_;
};

// 1536 MiB -> "1.5 GiB"; powers of 1024, one decimal.
std::string format_bytes(double bytes);

}  // namespace dlbench::cli
