#include "bench/peers/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "engine/core/error.h"

namespace dlbench::peers {
namespace {

using Clock = std::chrono::steady_clock;

// Enough of a Python traceback to see where it died.
constexpr std::size_t kStderrTailLines = 20;
constexpr std::size_t kStderrLineChars = 400;
// How often finish() looks whether the worker has exited.
constexpr auto kReapPoll = std::chrono::milliseconds(20);

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

int poll_timeout_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1000));
}

WorkerExit exit_of(int status) {
  WorkerExit e;
  if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.code = 128 + e.signal;
  }
  return e;
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv) {
  DLBENCH_CHECK(!argv.empty(), "a worker needs a program");
  int out[2], err[2], exec_status[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(exec_status, O_CLOEXEC) != 0)
    throw Error(ErrorKind::kResource, std::string("cannot create pipes: ") + std::strerror(errno),
                "raise the open-file limit (ulimit -n)");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0)
    throw Error(ErrorKind::kResource, std::string("cannot fork: ") + std::strerror(errno),
                "free memory or processes");
  if (pid_ == 0) {
    // Own process group, so a timeout can kill everything the framework started; and gone
    // with dlbench if dlbench itself is killed.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = write(exec_status[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid_, pid_);  // also from here, so the group exists before any kill
  close(out[1]);
  close(err[1]);
  close(exec_status[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_status[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(exec_status[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    kill_group();
    throw Error(ErrorKind::kExternal, "cannot run " + argv[0] + ": " + std::strerror(exec_errno),
                exec_errno == ENOENT ? "install it (Debian/Ubuntu: apt install python3) or name "
                                       "another interpreter with --python"
                                     : "check that it is an executable program");
  }
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) kill_group();
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void WorkerProcess::append_stderr(const char* data, std::size_t n) {
  err_partial_.append(data, n);
  std::size_t nl;
  while ((nl = err_partial_.find('\n')) != std::string::npos) {
    err_lines_.push_back(err_partial_.substr(0, std::min(nl, kStderrLineChars)));
    err_partial_.erase(0, nl + 1);
    if (err_lines_.size() > kStderrTailLines) err_lines_.pop_front();
  }
  if (err_partial_.size() > kStderrLineChars) err_partial_.resize(kStderrLineChars);
}

void WorkerProcess::drain_stderr(bool block_until_eof) {
  char buffer[4096];
  while (err_fd_ >= 0) {
    pollfd p{err_fd_, POLLIN, 0};
    if (!block_until_eof && poll(&p, 1, 0) <= 0) return;
    ssize_t n = read(err_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close_fd(err_fd_);
      return;
    }
    append_stderr(buffer, static_cast<std::size_t>(n));
  }
}

bool WorkerProcess::read_lines(Clock::time_point deadline,
                               const std::function<bool(const std::string&)>& on_line) {
  char buffer[4096];
  while (out_fd_ >= 0) {
    if (Clock::now() >= deadline) return false;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    int ready = poll(fds, err_fd_ >= 0 ? 2 : 1, poll_timeout_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (err_fd_ >= 0 && fds[1].revents) drain_stderr(false);
    if (!fds[0].revents) continue;
    ssize_t n = read(out_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close_fd(out_fd_);
      break;
    }
    out_buffer_.append(buffer, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = out_buffer_.find('\n')) != std::string::npos) {
      std::string line = out_buffer_.substr(0, nl);
      out_buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      if (!on_line(line)) return true;
    }
  }
  // stdout closed: a last line without its newline still counts.
  if (!out_buffer_.empty()) {
    std::string line;
    line.swap(out_buffer_);
    on_line(line);
  }
  return true;
}

bool WorkerProcess::try_reap(WorkerExit& exit) {
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  reaped_ = true;
  exit = exit_of(status);
  exit_ = exit;
  return true;
}

WorkerExit WorkerProcess::finish(Clock::time_point deadline) {
  if (reaped_) return exit_;
  WorkerExit exit;
  while (!try_reap(exit)) {
    drain_stderr(false);
    if (Clock::now() >= deadline) {
      exit = kill_group();
      exit.timed_out = true;
      return exit;
    }
    std::this_thread::sleep_for(kReapPoll);
  }
  // The group may outlive the worker (a helper holding stderr): do not wait for its EOF.
  killpg(pid_, SIGKILL);
  drain_stderr(false);
  return exit;
}

WorkerExit WorkerProcess::kill_group() {
  if (reaped_) return exit_;
  killpg(pid_, SIGKILL);
  kill(pid_, SIGKILL);  // in case setpgid had not happened yet
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  exit_ = exit_of(status);
  drain_stderr(false);
  return exit_;
}

std::string WorkerProcess::stderr_tail() const {
  std::string text;
  for (const std::string& l : err_lines_) text += "  | " + l + "\n";
  if (!err_partial_.empty()) text += "  | " + err_partial_ + "\n";
  if (!text.empty()) text.pop_back();
  return text;
}

}  // namespace dlbench::peers
