// Ctrl-C and SIGTERM during `dlbench run` and `dlbench suite`: the real binary, started on a
// CPU run long enough to be interrupted, gets the signal once it is measuring (its stderr says
// so). The run must be stored as interrupted with the steps it measured, the database closed,
// the terminal told, and the process ended by the signal (a shell's 130 / 143); a second signal
// ends it at once with nothing stored. The suite runner's own stop and --resume are checked
// without signals.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/store/sqlite_connection.h"
#include "bench/store/store.h"
#include "bench/suite/suite_runner.h"
#include "tests/store/store_test_util.h"
#include "tests/support/data_file.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;
using testing::temp_folder;
using Clock = std::chrono::steady_clock;

// Long enough never to finish by itself; small steps (milliseconds; a second on a loaded
// machine), since a stop waits for the step in progress.
const char* kLongRun =
    "run resnet50 --device cpu --input 32 --batch 1 --mode infer --warmup 1 --seconds 600";
// Nothing a test waits for takes this long, even on 2 busy cores; past it the test fails
// instead of hanging.
constexpr auto kPatience = std::chrono::seconds(90);

std::vector<std::string> split(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// A dlbench process with its stderr read as it comes (stdout goes to a file).
class Dlbench {
 public:
  explicit Dlbench(const std::string& args, const std::string& stdout_path) {
    int pipe_fds[2];
    EXPECT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
    std::vector<std::string> words = split(args);
    words.insert(words.begin(), DLBENCH_BINARY);
    pid_ = fork();
    if (pid_ == 0) {
      // A test runner started in the background may pass these on as ignored, and dlbench keeps
      // an inherited ignore: give the child the defaults a terminal would.
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, STDOUT_FILENO);
      dup2(pipe_fds[1], STDERR_FILENO);
      std::vector<char*> argv;
      for (std::string& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(pipe_fds[1]);
    err_fd_ = pipe_fds[0];
  }
  ~Dlbench() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (err_fd_ >= 0) close(err_fd_);
  }

  // Reads stderr until it holds `text`; false at end of file or after kPatience.
  bool wait_for(const std::string& text) {
    const Clock::time_point deadline = Clock::now() + kPatience;
    while (err_.find(text) == std::string::npos) {
      if (!read_some(deadline)) return false;
    }
    return true;
  }

  void send(int signal) { ASSERT_EQ(kill(pid_, signal), 0); }

  // Reads stderr to its end and reaps the process: the status as a shell reports it (128 + N
  // when signal N ended it); -1 if it did not end within kPatience.
  int finish() {
    const Clock::time_point deadline = Clock::now() + kPatience;
    while (read_some(deadline)) {
    }
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) return -1;
      usleep(10'000);
    }
    reaped_ = true;
    signaled_ = WIFSIGNALED(status);
    return signaled_ ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }

  bool ended_by_signal() const { return signaled_; }
  const std::string& err() const { return err_; }

 private:
  bool read_some(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{err_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char buffer[4096];
    ssize_t n = read(err_fd_, buffer, sizeof buffer);
    if (n <= 0) return false;
    err_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  bool signaled_ = false;
  std::string err_;
};

using testing::read_file;

json runs_of(const std::string& db) {
  auto r = dlbench("--db " + db + " --json runs list");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  return doc.is_object() ? doc["runs"] : json::array();
}

// Closed cleanly: SQLite removes the write-ahead log when its last connection closes, and the
// file passes its own check.
void expect_closed_cleanly(const std::string& db) {
  EXPECT_FALSE(std::filesystem::exists(db + "-wal")) << "the database was not closed";
  auto c = store::open_sqlite(db);
  EXPECT_EQ(store::to_text(c->query("PRAGMA integrity_check", {}).at(0)[0]), "ok");
}

struct Stopped {
  int status = -1;
  std::string err;
  json runs;
};

// Starts `args` on a fresh database, waits for `started` on stderr, sends `signal`, and
// returns how it ended and what the database holds.
Stopped stop_run(const std::string& name, const std::string& args, const std::string& started,
                 int signal, std::string* dir_out = nullptr) {
  std::string dir = temp_folder(name);
  if (dir_out) *dir_out = dir;
  std::string db = dir + "/r.db";
  Dlbench p("--db " + db + " " + args, dir + "/stdout.txt");
  Stopped s;
  EXPECT_TRUE(p.wait_for(started)) << p.err();
  p.send(signal);
  s.status = p.finish();
  s.err = p.err();
  EXPECT_TRUE(p.ended_by_signal()) << "a stopped run ends by its signal, for the shell's sake";
  expect_closed_cleanly(db);
  s.runs = runs_of(db);
  return s;
}

TEST(InterruptCliTest, SigintStoresTheMeasuredStepsAsAnInterruptedRun) {
  std::string dir;
  // An earlier --json file: an interrupted run leaves it as it was.
  std::string json_path = ::testing::TempDir() + "dlbench-interrupt-earlier.json";
  std::ofstream(json_path) << "{\"earlier\": true}\n";
  Stopped s = stop_run("sigint", std::string(kLongRun) + " --json " + json_path, "measure step 1",
                       SIGINT, &dir);
  EXPECT_EQ(s.status, 130) << s.err;
  EXPECT_NE(s.err.find("dlbench: interrupted by SIGINT after "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("; stored as run 1 (interrupted) in "), std::string::npos) << s.err;
  ASSERT_EQ(s.runs.size(), 1u);
  const json& run = s.runs[0];
  EXPECT_EQ(run["status"], "interrupted");
  EXPECT_NE(run["error"].get<std::string>().find("interrupted by SIGINT after "),
            std::string::npos);
  EXPECT_GE(run["result"]["measured_steps"].get<int>(), 1);
  EXPECT_EQ(run["result"]["interrupted"], run["error"]);
  // The rate of the steps it measured, nothing made up.
  const double steps = run["result"]["measured_steps"].get<double>();
  EXPECT_NEAR(run["throughput_samples_per_s"].get<double>(),
              steps / run["result"]["measured_seconds"].get<double>(), 1e-6);
  EXPECT_EQ(read_file(json_path), "{\"earlier\": true}\n");
  // Printed as what it measured, then shown as interrupted, with its rate.
  EXPECT_NE(read_file(dir + "/stdout.txt").find("Throughput"), std::string::npos);
  auto list = dlbench("--db " + dir + "/r.db runs list");
  EXPECT_NE(list.out.find("interrupted"), std::string::npos) << list.out;
  auto show = dlbench("--db " + dir + "/r.db runs show 1");
  EXPECT_NE(show.out.find("interrupted by SIGINT after "), std::string::npos) << show.out;
  std::remove(json_path.c_str());
}

TEST(InterruptCliTest, SigtermStoresTheRunAndEndsWith143) {
  Stopped s =
      stop_run("sigterm", std::string(kLongRun) + " --no-telemetry", "measure step 1", SIGTERM);
  EXPECT_EQ(s.status, 143) << s.err;
  EXPECT_NE(s.err.find("dlbench: interrupted by SIGTERM after "), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("stored as run 1 (interrupted)"), std::string::npos) << s.err;
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0]["status"], "interrupted");
  EXPECT_GE(s.runs[0]["result"]["measured_steps"].get<int>(), 1);
}

// Stopped while GNMT translates its test set (--test-data), after the measured steps: the run is
// stored as interrupted with everything it measured and no BLEU. Five batches of two sentences,
// each decoded by an untrained full-size model (a good part of a second a batch here), so the
// stop, asked as the first begins, is seen as a later one begins.
TEST(InterruptCliTest, StoppedDuringTheTestSetStoresTheMeasurementWithoutBleu) {
  std::string pairs;
  for (int k = 0; k < 10; ++k) {
    const std::string sentence = std::to_string(10 + k) + " 11 12 13";
    pairs += sentence + "\t" + sentence + "\n";
  }
  const std::string data = testing::write_data_file("stop-pairs.ids", pairs);
  Stopped s = stop_run("testset",
                       "run gnmt --device cpu --input 16 --batch 2 --steps 1 --warmup 0 "
                       "--no-telemetry --data " +
                           data + " --test-data " + data,
                       "test set step 1", SIGINT);
  EXPECT_EQ(s.status, 130) << s.err;
  ASSERT_EQ(s.runs.size(), 1u);
  const json& run = s.runs[0];
  EXPECT_EQ(run["status"], "interrupted");
  EXPECT_EQ(run["error"],
            "interrupted by SIGINT while translating the test set, after the measured steps: no "
            "BLEU");
  EXPECT_EQ(run["result"]["measured_steps"], 1);
  EXPECT_GT(run["throughput_samples_per_s"].get<double>(), 0);
  for (const json& m : run["result"]["metrics"])
    EXPECT_NE(m["tag"].get<std::string>().rfind("quality/", 0), 0u) << m["tag"];
}

// Stopped before its first measured step: stored, but with no throughput at all.
TEST(InterruptCliTest, StoppedDuringWarmUpHasNoThroughput) {
  std::string dir;
  Stopped s = stop_run(
      "warmup",
      "run resnet50 --device cpu --input 32 --batch 1 --mode infer --warmup 100000 --steps 1",
      "warm-up step 1", SIGINT, &dir);
  EXPECT_EQ(s.status, 130) << s.err;
  EXPECT_NE(s.err.find("during warm-up"), std::string::npos) << s.err;
  ASSERT_EQ(s.runs.size(), 1u);
  const json& run = s.runs[0];
  EXPECT_EQ(run["status"], "interrupted");
  EXPECT_EQ(run["result"]["measured_steps"], 0);
  EXPECT_TRUE(run["result"]["throughput_samples_per_s"].is_null());
  EXPECT_FALSE(run["result"].contains("step_time_ms"));
  auto show = dlbench("--db " + dir + "/r.db --json runs show 1");
  json full = json::parse(show.out, nullptr, false);
  for (const json& m : full["metrics"]) EXPECT_NE(m["tag"], "throughput/samples_per_s");
  EXPECT_EQ(read_file(dir + "/stdout.txt"), "") << "nothing measured, nothing to print";
}

TEST(InterruptCliTest, NoStoreSaysNothingWasStored) {
  std::string dir = temp_folder("nostore-stop");
  Dlbench p(std::string(kLongRun) + " --no-store --no-telemetry", dir + "/stdout.txt");
  ASSERT_TRUE(p.wait_for("measure step 1")) << p.err();
  p.send(SIGINT);
  EXPECT_EQ(p.finish(), 130) << p.err();
  EXPECT_NE(p.err().find("not stored (--no-store)"), std::string::npos) << p.err();
}

// A second signal while the first is being honoured ends the process at once: nothing stored.
// A step of this size takes a good part of a second on a CPU, so the second arrives mid-step.
TEST(InterruptCliTest, SecondSigintQuitsAtOnce) {
  std::string dir = temp_folder("double");
  std::string db = dir + "/r.db";
  Dlbench p(
      "--db " + db + " run resnet50 --device cpu --batch 4 --warmup 0 --seconds 600 --no-telemetry",
      dir + "/stdout.txt");
  ASSERT_TRUE(p.wait_for("measure step 1")) << p.err();
  p.send(SIGINT);
  ASSERT_TRUE(p.wait_for("stopping after the current step")) << p.err();
  p.send(SIGINT);
  EXPECT_EQ(p.finish(), 130) << p.err();
  EXPECT_TRUE(p.ended_by_signal());
  EXPECT_EQ(p.err().find("stored as run"), std::string::npos) << p.err();
  EXPECT_TRUE(runs_of(db).empty());
}

std::string stoppable_suite(const std::string& dir) {
  std::string path = dir + "/stoppable.toml";
  std::ofstream(path) << "name = \"stoppable\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 1\n"
                         "input = 32\nbatch = 1\nmode = \"infer\"\n"
                         "[[run]]\nmodel = \"resnet50\"\nseconds = 600\n"
                         "[[run]]\nmodel = \"resnet50\"\nmode = \"train\"\nsteps = 1\n";
  return path;
}

TEST(InterruptCliTest, SuiteStoresTheRunInProgressAndStartsNoOther) {
  std::string dir = temp_folder("suite-stop");
  std::string db = dir + "/r.db";
  // --verbose: a line when a run starts measuring, also when stderr is not a terminal.
  Dlbench p("--verbose --db " + db + " suite " + stoppable_suite(dir), dir + "/stdout.txt");
  ASSERT_TRUE(p.wait_for(": measure\n")) << p.err();
  p.send(SIGINT);
  EXPECT_EQ(p.finish(), 130) << p.err();
  EXPECT_NE(p.err().find("dlbench: suite stoppable interrupted by SIGINT after "),
            std::string::npos)
      << p.err();
  EXPECT_NE(p.err().find("stored as run 1 (interrupted)"), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("did not run: resnet50 train"), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("--resume"), std::string::npos) << p.err();
  expect_closed_cleanly(db);
  json runs = runs_of(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "interrupted");
  EXPECT_EQ(runs[0]["mode"], "infer");
  EXPECT_GE(runs[0]["result"]["measured_steps"].get<int>(), 1);
  EXPECT_EQ(runs[0]["suite"]["name"], "stoppable");
  // The report shows it as interrupted; compare leaves it out and says so.
  auto md = dlbench("--db " + db + " report --last --format md");
  EXPECT_NE(md.out.find("interrupted by SIGINT"), std::string::npos) << md.out;
  auto cmp = dlbench("--db " + db + " compare 1 1");
  EXPECT_NE(cmp.out.find("left out, as they did not complete: run 1 (A, interrupted)"),
            std::string::npos)
      << cmp.out;
}

// The suite runner without signals: a stop asked in a run's measured phase stores it as
// interrupted; --resume does not count it as landed and runs it again. (What did not start is
// run again by --resume as before; StoreCliTest covers that.)
TEST(InterruptSuiteTest, ResumeRunsTheInterruptedRunAgain) {
  std::string dir = temp_folder("suite-resume");
  std::string path = dir + "/one.toml";
  std::ofstream(path) << "name = \"one\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\nsteps = 2\n"
                         "input = 32\nmode = \"infer\"\nbatch = 1\n[[run]]\nmodel = \"resnet50\"\n";
  suite::SuiteSpec spec = suite::load_suite(path);
  auto db = store::open_store(dir + "/r.db");
  suite::SuiteOptions options;
  suite::SuiteEvents events;
  bool measuring = false;
  events.on_progress = [&](const suite::SuiteProgress& p) { measuring |= p.phase == "measure"; };
  events.stop = [&] { return measuring ? std::string("a test") : std::string(); };
  suite::SuiteOutcome first = suite::run_suite(spec, *db, options, events);
  EXPECT_EQ(first.ran, 1);
  EXPECT_EQ(first.interrupted, "interrupted by a test after 1 of 2 measured steps");
  EXPECT_TRUE(first.not_run.empty());
  std::vector<store::RunRecord> runs = db->list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "interrupted");
  EXPECT_EQ(runs[0].error, first.interrupted);
  EXPECT_TRUE(runs[0].measured());
  EXPECT_EQ(first.interrupted_run, runs[0].id);
  EXPECT_EQ(db->suites("one").at(0).landed_runs, 0);

  options.resume = true;
  suite::SuiteOutcome resumed = suite::run_suite(spec, *db, options);
  EXPECT_EQ(resumed.invocation, first.invocation);
  EXPECT_EQ(resumed.skipped, 0);
  EXPECT_EQ(resumed.ran, 1);
  EXPECT_TRUE(resumed.interrupted.empty());
  runs = db->list_runs({});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, "ok");  // newest first
  EXPECT_EQ(db->suites("one").at(0).landed_runs, 1);
}

// A stop asked between two runs (while the first was stored): the second does not start.
TEST(InterruptSuiteTest, StopBetweenRunsStartsNoOther) {
  std::string dir = temp_folder("suite-between");
  std::string path = dir + "/two.toml";
  std::ofstream(path) << "name = \"two\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\nsteps = 1\n"
                         "input = 32\nmode = \"infer\"\n[[run]]\nmodel = \"resnet50\"\n"
                         "batch = [1, 2]\n";
  suite::SuiteSpec spec = suite::load_suite(path);
  auto db = store::open_store(dir + "/r.db");
  suite::SuiteEvents events;
  bool stored = false;
  events.on_run_done = [&](const suite::SuiteEntry&, const store::RunRecord&) { stored = true; };
  events.stop = [&] { return stored ? std::string("SIGTERM") : std::string(); };
  suite::SuiteOutcome out = suite::run_suite(spec, *db, {}, events);
  EXPECT_EQ(out.ran, 1);
  EXPECT_EQ(out.interrupted, "interrupted by SIGTERM between runs");
  EXPECT_EQ(out.interrupted_run, 0);
  EXPECT_EQ(out.not_run.size(), 1u);
  std::vector<store::RunRecord> runs = db->list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "ok");
}

}  // namespace
}  // namespace dlbench
