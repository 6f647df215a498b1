// Where a tensor lives and where an op runs: "cpu" or "cuda:N".
#pragma once

#include <string>

namespace dlbench {

enum class DeviceType { kCpu, kCuda };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int index) { return {DeviceType::kCuda, index}; }
  bool operator==(const Device&) const = default;
};

std::string to_string(const Device& d);
// Parses "cpu", "cuda", "cuda:N"; throws Error(kUsage) on anything else.
Device parse_device(const std::string& text);

}  // namespace dlbench
