#include "cli/stop_signals.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>

#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

// Read by the runner's thread while the handler may write it on any thread: a lock-free atomic
// is both async-signal-safe and free of data races.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

constexpr int kStopSignals[] = {SIGINT, SIGTERM};
struct sigaction g_previous[std::size(kStopSignals)];
bool g_installed[std::size(kStopSignals)] = {};
bool g_active = false;

constexpr char kIntMessage[] =
    "\ndlbench: SIGINT: stopping after the current step (Ctrl-C again quits at once)\n";
constexpr char kTermMessage[] =
    "\ndlbench: SIGTERM: stopping after the current step (a second signal quits at once)\n";

// Async-signal-safe only: atomics, sigaction, raise, write.
void on_stop_signal(int signal) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, signal)) {
    // The second one: the default action, delivered as soon as this handler returns (the
    // signal is blocked while it runs).
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signal, &default_action, nullptr);
    raise(signal);
    return;
  }
  const int saved_errno = errno;
  const bool is_int = signal == SIGINT;
  ssize_t written = write(STDERR_FILENO, is_int ? kIntMessage : kTermMessage,
                          (is_int ? sizeof kIntMessage : sizeof kTermMessage) - 1);
  (void)written;  // nothing to do if stderr is gone
  errno = saved_errno;
}

}  // namespace

StopSignals::StopSignals() {
  DLBENCH_CHECK(!g_active, "one StopSignals at a time");
  g_active = true;
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  // Both blocked while either handler runs; interrupted system calls restart, so libraries that
  // do not expect EINTR (SQLite, oneDNN, the telemetry sampler) see nothing.
  sigemptyset(&action.sa_mask);
  for (int s : kStopSignals) sigaddset(&action.sa_mask, s);
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    struct sigaction current {};
    sigaction(kStopSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;
    g_installed[i] = sigaction(kStopSignals[i], &action, &g_previous[i]) == 0;
  }
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
    if (g_installed[i]) sigaction(kStopSignals[i], &g_previous[i], nullptr);
  for (bool& installed : g_installed) installed = false;
  g_active = false;
}

int StopSignals::signal() const {
  return g_signal.load();
}

std::string StopSignals::reason() const {
  const int s = signal();
  return s == 0 ? std::string() : signal_name(s);
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal);
  }
}

int end_by_signal(int signal) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal);
  return 128 + signal;
}

}  // namespace dlbench::cli
