// A command run under dlbench: forked held, so that sampling can start before it runs;
// released to exec; waited for without being reaped, so /proc still shows its final CPU times;
// then reaped. While it runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to dlbench by another
// process are forwarded to it; the same signals from the terminal reach it directly (it is in
// dlbench's process group) and are not sent twice. dlbench itself keeps running, so it can
// still write the summary.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dlbench::cli {

struct ChildExit {
  int code = 0;    // exit status, or 128 + signal when killed (shell convention)
  int signal = 0;  // the signal that killed it, 0 when it exited
};

// Installs the forwarding handlers for its lifetime; one at a time.
class SignalForwarder {
 public:
  SignalForwarder();
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  // Forward to pid from now on (0: to nobody). A signal that came while there was nobody is
  // delivered now.
  void forward_to(pid_t pid);
};

class ChildProcess {
 public:
  // Forks a child that waits for release() before it execs argv (PATH is searched).
  // Throws dlbench::Error (resource) when fork fails.
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();  // a child never released exits without running; a live one is waited for
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec and waits until it has: returns 0, or the errno of a failed exec.
  int release();
  // Blocks until the child has exited, leaving it a zombie for a last look at /proc.
  void wait_exited();
  ChildExit reap();

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;  // write end: one byte lets the child exec
  int exec_fd_ = -1;     // read end: errno of a failed exec, EOF once exec succeeded
  bool reaped_ = false;
};

}  // namespace dlbench::cli
