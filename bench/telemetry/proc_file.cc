#include "bench/telemetry/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace dlbench::telemetry {

bool read_small_file(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out.clear();
  char buffer[4096];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    ok = n == 0;
    break;
  }
  ::close(fd);
  return ok;
}

std::optional<std::uint64_t> find_number(std::string_view text, std::string_view key,
                                         bool scale_kib) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':')
      continue;
    std::size_t digits = line.find_first_of("0123456789", key.size() + 1);
    if (digits == std::string_view::npos) return std::nullopt;
    std::uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(line.data() + digits, line.data() + line.size(), value);
    if (ec != std::errc()) return std::nullopt;
    bool kib =
        std::string_view(ptr, line.data() + line.size()).find("kB") != std::string_view::npos;
    return scale_kib && kib ? value * 1024 : value;
  }
  return std::nullopt;
}

}  // namespace dlbench::telemetry
