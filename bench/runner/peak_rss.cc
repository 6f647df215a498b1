#include "bench/runner/peak_rss.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include "bench/telemetry/proc_file.h"

namespace dlbench::runner {

bool reset_peak_rss() {
  const int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // 5: reset the peak resident set size to the current one (proc(5), clear_refs).
  const bool ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}

PeakRss read_peak_rss(bool was_reset) {
  std::string status;
  if (telemetry::read_small_file("/proc/self/status", status))
    if (auto hwm = telemetry::find_number(status, "VmHWM", true))
      return {static_cast<double>(*hwm), was_reset};
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return {static_cast<double>(usage.ru_maxrss) * 1024.0, false};  // Linux reports KiB
}

}  // namespace dlbench::runner
