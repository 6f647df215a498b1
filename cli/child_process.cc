#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kExecFailed = 127;

std::atomic<pid_t> forward_pid{0};
std::atomic<int> pending_signal{0};
struct sigaction saved_actions[std::size(kForwarded)];
bool installed[std::size(kForwarded)];

static_assert(std::atomic<pid_t>::is_always_lock_free, "used in a signal handler");
static_assert(std::atomic<int>::is_always_lock_free, "used in a signal handler");

void forward(int signal, siginfo_t* info, void*) {
  pid_t pid = forward_pid.load();
  if (pid <= 0) {
    pending_signal.store(signal);
    return;
  }
  // si_code > 0: the kernel sent it (the terminal's Ctrl-C to the whole foreground process
  // group), so the child has it already. <= 0: kill() from a process, meant for dlbench.
  if (info == nullptr || info->si_code <= 0) kill(pid, signal);
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

SignalForwarder::SignalForwarder() {
  pending_signal.store(0);
  struct sigaction action {};
  action.sa_sigaction = forward;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
    // A signal ignored when dlbench started (nohup, a shell's background job) stays ignored,
    // for dlbench and for the command, which inherits that.
    sigaction(kForwarded[i], nullptr, &saved_actions[i]);
    installed[i] = saved_actions[i].sa_handler != SIG_IGN;
    if (installed[i]) sigaction(kForwarded[i], &action, nullptr);
  }
}

SignalForwarder::~SignalForwarder() {
  forward_pid.store(0);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i)
    if (installed[i]) sigaction(kForwarded[i], &saved_actions[i], nullptr);
}

void SignalForwarder::forward_to(pid_t pid) {
  forward_pid.store(pid);
  int signal = pending_signal.exchange(0);
  if (pid > 0 && signal != 0) kill(pid, signal);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int release_pipe[2], exec_pipe[2];
  if (pipe2(release_pipe, O_CLOEXEC) != 0)
    throw Error(ErrorKind::kResource, std::string("cannot create a pipe: ") + strerror(errno),
                "too many open files? check 'ulimit -n'");
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close(release_pipe[0]);
    close(release_pipe[1]);
    throw Error(ErrorKind::kResource, std::string("cannot create a pipe: ") + strerror(errno),
                "too many open files? check 'ulimit -n'");
  }
  pid_ = fork();
  if (pid_ < 0) {
    int error = errno;
    for (int fd : {release_pipe[0], release_pipe[1], exec_pipe[0], exec_pipe[1]}) close(fd);
    throw Error(ErrorKind::kResource,
                std::string("cannot start the command: fork failed: ") + strerror(error),
                "the system is out of processes or memory");
  }
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec.
    close(release_pipe[1]);
    close(exec_pipe[0]);
    char go = 0;
    ssize_t n;
    do n = read(release_pipe[0], &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) _exit(kExecFailed);  // dlbench gave up before releasing us
    execvp(args[0], args.data());
    int error = errno;
    ssize_t ignored = write(exec_pipe[1], &error, sizeof error);
    (void)ignored;
    _exit(kExecFailed);
  }
  close(release_pipe[0]);
  close(exec_pipe[1]);
  release_fd_ = release_pipe[1];
  exec_fd_ = exec_pipe[0];
}

ChildProcess::~ChildProcess() {
  close_fd(release_fd_);  // a held child reads EOF and exits
  close_fd(exec_fd_);
  if (pid_ > 0 && !reaped_) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

int ChildProcess::release() {
  char go = 1;
  ssize_t n;
  do n = write(release_fd_, &go, 1);
  while (n < 0 && errno == EINTR);
  close_fd(release_fd_);
  int error = 0;
  ssize_t got;
  do got = read(exec_fd_, &error, sizeof error);
  while (got < 0 && errno == EINTR);
  close_fd(exec_fd_);
  return got == static_cast<ssize_t>(sizeof error) ? error : 0;
}

void ChildProcess::wait_exited() {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
}

ChildExit ChildProcess::reap() {
  int status = 0;
  pid_t got;
  do got = waitpid(pid_, &status, 0);
  while (got < 0 && errno == EINTR);
  reaped_ = true;
  ChildExit exit;
  if (got < 0) {
    exit.code = kExecFailed;
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.code = 128 + exit.signal;
  } else {
    exit.code = WEXITSTATUS(status);
  }
  return exit;
}

}  // namespace dlbench::cli
