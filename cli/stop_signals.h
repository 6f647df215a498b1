// SIGINT and SIGTERM during `dlbench run` and `dlbench suite`: the first one asks the run to
// stop after the step in progress, so what it measured is stored as an interrupted run; a second
// one (of either kind) ends the process at once, as if dlbench had no handler, so a user can
// always force-quit. The handler only sets an atomic flag (and writes one line with write(2));
// the runner polls it between steps through RunHooks::stop.
#pragma once

#include <csignal>
#include <exception>
#include <string>

namespace dlbench::cli {

class StopSignals {
 public:
  // Installs the handlers for SIGINT and SIGTERM. A signal the process inherited as ignored
  // (nohup, a background job of a script) stays ignored. One instance at a time.
  StopSignals();
  ~StopSignals();  // puts the earlier handlers back
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // SIGINT or SIGTERM once one arrived, else 0.
  int signal() const;
  // For RunHooks::stop: empty until a signal arrived, then its name ("SIGINT").
  std::string reason() const;
};

// "SIGINT", "SIGTERM"; "signal N" for others.
std::string signal_name(int signal);

// Thrown by a command that stopped on a signal after it stored what it had and said so. The
// command line then ends the process by that signal (end_by_signal).
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal) : signal_(signal) {}
  int signal() const { return signal_; }
  const char* what() const noexcept override { return "interrupted by a signal"; }

 private:
  int signal_;
};

// Ends the process by `signal` with its default action, so its parent sees what it asked for:
// a shell reports 128 + signal (130 for SIGINT, 143 for SIGTERM) and a script looping over
// dlbench stops too, instead of going on as it would after a plain exit(130). Flushes the
// standard streams first. Returns 128 + signal only if the signal did not end the process.
int end_by_signal(int signal);

}  // namespace dlbench::cli
