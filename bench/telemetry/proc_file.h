// Small /proc, /sys and cgroup files, read with one open/read/close: the sampler reads a few
// per tick, so they skip iostreams.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlbench::telemetry {

// Replaces out with the file's contents; false when it cannot be opened or read.
bool read_small_file(const std::string& path, std::string& out);

// The value of the first line "key:<spaces>value..." (meminfo, status) as a number of the
// line's unit ("kB" -> bytes when scale_kib is set); nullopt when absent.
std::optional<std::uint64_t> find_number(std::string_view text, std::string_view key,
                                         bool scale_kib);

}  // namespace dlbench::telemetry
