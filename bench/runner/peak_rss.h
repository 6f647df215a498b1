// The peak resident memory of this process during one run. getrusage's ru_maxrss is the peak
// over the process's whole life, so in a suite every run after the largest one would show that
// one's peak. Linux lets a process reset its high-water mark (VmHWM) to what is resident now
// by writing "5" to /proc/self/clear_refs (Linux 4.0+); a run resets it when it starts and
// reads VmHWM at the end.
#pragma once

namespace dlbench::runner {

struct PeakRss {
  double bytes = 0;
  // true: the peak since reset_peak_rss() (this run's); false: since the process started,
  // as the kernel did not allow the reset.
  bool since_reset = false;
};

// Returns whether the kernel reset the high-water mark.
bool reset_peak_rss();
// VmHWM of /proc/self/status (ru_maxrss where that cannot be read).
PeakRss read_peak_rss(bool was_reset);

}  // namespace dlbench::runner
