// A peer worker as a child process: started in its own process group with stdout and stderr on
// pipes, read line by line under one deadline for the whole session, and killed with its whole
// group (the framework may start helper processes) when it overruns or the harness gives up.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace dlbench::peers {

// How the worker ended.
struct WorkerExit {
  bool timed_out = false;
  int code = 0;    // exit status, or 128 + signal (shell convention)
  int signal = 0;  // the signal that ended it, 0 when it exited
};

class WorkerProcess {
 public:
  // Starts argv[0] (PATH searched). Throws dlbench::Error (external) when it cannot be
  // executed: the message names the program and the reason (e.g. not found).
  explicit WorkerProcess(const std::vector<std::string>& argv);
  ~WorkerProcess();  // kills the group and reaps when the worker still runs
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Calls on_line for each complete stdout line (without '\n') until stdout closes or the
  // deadline passes. on_line returns false to stop reading (the harness has what it needs).
  // Returns false when the deadline passed.
  bool read_lines(std::chrono::steady_clock::time_point deadline,
                  const std::function<bool(const std::string&)>& on_line);

  // Waits for the worker to exit, at most until `deadline`; then kills the group.
  WorkerExit finish(std::chrono::steady_clock::time_point deadline);
  // Kills the whole process group now and reaps the worker.
  WorkerExit kill_group();

  // The last lines the worker wrote on stderr, for error messages.
  std::string stderr_tail() const;

 private:
  void drain_stderr(bool block_until_eof);
  void append_stderr(const char* data, std::size_t n);
  bool try_reap(WorkerExit& exit);

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool reaped_ = false;
  WorkerExit exit_;
  std::string out_buffer_;
  std::string err_partial_;
  std::deque<std::string> err_lines_;
};

}  // namespace dlbench::peers
