// What `dlbench run` says while it works: on a terminal (a pseudo-terminal here, from forkpty)
// one live line redrawn with '\r' (phase, step i/N, rate, time left); in a log, plain lines
// without a control character; and a long run says how long before it goes on.
#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::dlbench;

const char* kRun =
    "run resnet50 --device cpu --input 32 --batch 2 --warmup 1 --steps 3 --no-store "
    "--no-telemetry";

// Runs dlbench with stdin, stdout and stderr on a pseudo-terminal; returns all it wrote.
std::string run_in_terminal(const std::string& args, int& exit_code) {
  const std::string command = std::string(DLBENCH_BINARY) + " " + args;
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, nullptr);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  if (pid < 0) return out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(terminal, buffer, sizeof buffer);
    if (n > 0)
      out.append(buffer, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;  // EIO: the child closed the terminal's other side
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(terminal);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

TEST(ProgressCliTest, ATerminalGetsALiveLine) {
  int exit_code = -1;
  const std::string out = run_in_terminal(kRun, exit_code);
  ASSERT_EQ(exit_code, 0) << out;
  const std::size_t live = out.find("\rmeasure step 3/3  ");
  ASSERT_NE(live, std::string::npos) << out;
  const std::string line = out.substr(live, out.find('\r', live + 1) - live);
  EXPECT_NE(line.find(" samples/s  elapsed "), std::string::npos) << line;
  EXPECT_NE(line.find("  left ~"), std::string::npos) << line;
  EXPECT_NE(out.find("Throughput"), std::string::npos) << out;
}

TEST(ProgressCliTest, ALogGetsPlainLinesOnly) {
  auto r = dlbench(kRun);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("  warm-up step 1/1\n  measure step 1/3\n"), std::string::npos) << r.err;
  for (const std::string& text : {r.out, r.err})
    for (char c : text)
      EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c) << "\n" << text;
}

// Far more steps than a test waits for: the run says how long it would take once a step after
// the first (which measures algorithms) is timed, then SIGINT stops it (and keeps what it
// measured).
TEST(ProgressCliTest, ALongRunSaysHowLongFirst) {
  auto r = testing::run_command(
      "timeout --preserve-status -s INT 10 " + std::string(DLBENCH_BINARY) +
      " run vgg16 --device cpu --input 32 --batch 1 --mode infer --warmup 1 --steps 10000000 "
      "--no-store --no-telemetry");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("dlbench: this run is long: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--batch, --steps or --seconds shorten it"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dlbench
