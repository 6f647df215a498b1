// dlbench monitor end to end on CPU: the real binary around small helper children (busy loop,
// resident memory), exit codes and signals, files, bad input, and the no-driver path.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/core/json_text.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::run_command;

const std::string kDlbench = DLBENCH_BINARY;
const std::string kBusy = TELEMETRY_BUSY_CHILD;
const std::string kMemory = TELEMETRY_MEMORY_CHILD;
const char* kNoDriver = "DLBENCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 ";
const std::string kFakeNvml = std::string("DLBENCH_NVML_LIBRARY=") + TELEMETRY_FAKE_NVML + " ";

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/dlbench-monitor-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  json read_json(const std::string& name) const {
    std::ifstream in(path(name));
    EXPECT_TRUE(in.good()) << path(name) << " was not written";
    return in ? json::parse(in) : json();
  }
  testing::CommandResult monitor(const std::string& args, const std::string& env = "") {
    return run_command(env + kDlbench + " monitor " + args);
  }

  std::string dir_;
};

// "cpu_s=0.98 wall_s=1.00" lines printed by busy_child.
double child_cpu_seconds(const std::string& out) {
  double total = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    double cpu = 0, wall = 0;
    if (std::sscanf(line.c_str(), "cpu_s=%lf wall_s=%lf", &cpu, &wall) == 2) total += cpu;
  }
  return total;
}

const json& metric(const json& summary, const std::string& name) {
  static const json kNone;
  if (!summary.contains("metrics") || !summary["metrics"].contains(name)) {
    ADD_FAILURE() << "no metric " << name;
    return kNone;
  }
  return summary["metrics"][name];
}

TEST_F(MonitorTest, BusyChildIsAboutOneCore) {
  auto r = monitor("--interval 0.2 --json " + path("busy.json") + " -- " + kBusy + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("busy.json");
  const json& cpu = metric(s, "process.cpu");
  double own = child_cpu_seconds(r.out);
  double duration = s["duration_s"];
  double own_percent = 100.0 * own / duration;
  std::printf(
      "process.cpu mean %.1f %% (p95 %.1f, max %.1f), total %.3f s; the child measured "
      "%.3f s of CPU in %.3f s = %.1f %% of a core\n",
      cpu["mean"].get<double>(), cpu["p95"].get<double>(), cpu["max"].get<double>(),
      cpu["total"].get<double>(), own, duration, own_percent);
  // dlbench's figure is the child's own CPU time, to a couple of 10 ms ticks.
  EXPECT_NEAR(cpu["total"].get<double>(), own, 0.03 + 0.03 * own);
  EXPECT_NEAR(cpu["mean"].get<double>(), own_percent, 3.0);
  // On an idle core that is ~100 %; a loaded CI machine gives the child less, and says so.
  if (own_percent > 90.0)
    EXPECT_NEAR(cpu["mean"].get<double>(), 100.0, 10.0);
  else
    std::printf("note: the machine is busy; the child got only %.0f %% of a core\n", own_percent);
  EXPECT_EQ(cpu["unit"], "%");
}

TEST_F(MonitorTest, ChildrenAndReapedGrandchildrenAreCounted) {
  std::string script = "'" + kBusy + " 1 & " + kBusy + " 1; wait'";
  auto r = monitor("--interval 0.2 --json " + path("tree.json") + " -- sh -c " + script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("tree.json");
  double own = child_cpu_seconds(r.out);
  const json& cpu = metric(s, "process.cpu");
  std::printf(
      "two busy children: dlbench %.3f s, children measured %.3f s (mean %.0f %%, "
      "max %.0f processes)\n",
      cpu["total"].get<double>(), own, cpu["mean"].get<double>(),
      metric(s, "process.count")["max"].get<double>());
  EXPECT_NEAR(cpu["total"].get<double>(), own, 0.05 + 0.05 * own);
  EXPECT_GE(metric(s, "process.count")["max"].get<double>(), 2.0);
}

TEST_F(MonitorTest, ChildHolding256MiBReportsItsRss) {
  auto r = monitor("--interval 0.2 --json " + path("mem.json") + " -- " + kMemory + " 256 1.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("mem.json");
  constexpr double kExpected = 256.0 * 1024 * 1024;
  double rss = metric(s, "process.rss")["max"];
  double peak = metric(s, "process.rss_peak")["max"];
  std::printf("RSS max %.1f MiB, peak %.1f MiB (expected 256 MiB)\n", rss / (1 << 20),
              peak / (1 << 20));
  EXPECT_NEAR(rss, kExpected, 0.1 * kExpected);
  EXPECT_NEAR(peak, kExpected, 0.1 * kExpected);
  EXPECT_GE(peak, rss);
}

TEST_F(MonitorTest, SampleCountIsDurationOverInterval) {
  auto r = monitor("--interval 0.2 --json " + path("n.json") + " -- sleep 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("n.json");
  double duration = s["duration_s"], interval = s["interval_s"];
  double samples = s["samples"];
  std::printf("%.0f samples in %.3f s every %.1f s\n", samples, duration, interval);
  EXPECT_NEAR(duration, 2.0, 0.5);
  // A sample at the start, one per interval, one at the end.
  EXPECT_NEAR(samples, duration / interval + 1, 1.0);
  EXPECT_EQ(metric(s, "process.rss")["samples"].get<double>(), samples);
}

TEST_F(MonitorTest, CsvHasEveryTimestampedSample) {
  auto r = monitor("--interval 0.1 --csv " + path("s.csv") + " --json " + path("s.json") +
                   " -- sleep 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream csv(path("s.csv"));
  std::string header;
  ASSERT_TRUE(std::getline(csv, header));
  EXPECT_EQ(header.rfind("unix_time_s,elapsed_s,process.cpu [%],", 0), 0u) << header;
  std::size_t rows = 0;
  double previous = -1;
  double now = static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  for (std::string line; std::getline(csv, line); ++rows) {
    double unix_time = 0, elapsed = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf", &unix_time, &elapsed), 2) << line;
    EXPECT_NEAR(unix_time, now, 60.0);
    EXPECT_GT(elapsed, previous);
    previous = elapsed;
  }
  EXPECT_EQ(rows, read_json("s.json")["samples"].get<std::size_t>());
}

TEST_F(MonitorTest, ExitCodePassesThrough) {
  auto r = monitor("--json " + path("e.json") + " -- sh -c 'exit 7'");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(read_json("e.json")["exit_code"], 7);
  EXPECT_NE(r.err.find("exited with code 7"), std::string::npos) << r.err;
}

TEST_F(MonitorTest, ACommandKilledByASignalGives128PlusIt) {
  auto r = monitor("--json " + path("k.json") + " -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  json s = read_json("k.json");
  EXPECT_EQ(s["signal"], SIGTERM);
  EXPECT_NE(r.err.find("killed by signal 15"), std::string::npos) << r.err;
}

// dlbench monitor -- sleep 30, then a signal to dlbench: forwarded, summary still written.
// The monitored command says when it runs (dlbench forwards signals before it lets the command
// start), so a loaded machine's slow start-up cannot make the signal reach dlbench before it
// forwards any: a fixed wait did, under a parallel build.
int signal_dlbench(const std::string& json_path, int signal) {
  const std::string ready = json_path + ".ready";
  const std::string command = "touch '" + ready + "'; exec sleep 30";
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(98);
    execl(kDlbench.c_str(), kDlbench.c_str(), "monitor", "--interval", "0.1", "--json",
          json_path.c_str(), "--", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(99);
  }
  for (int waited = 0; waited < 300 && !std::filesystem::exists(ready); ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Long enough for two samples at the 0.1 s interval.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  kill(pid, signal);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

TEST_F(MonitorTest, SigtermIsForwardedAndTheSummaryStillWritten) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(signal_dlbench(path("t.json"), SIGTERM), 128 + SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  json s = read_json("t.json");
  EXPECT_EQ(s["signal"], SIGTERM);
  EXPECT_GE(s["samples"].get<int>(), 2);
}

TEST_F(MonitorTest, SigintIsForwardedAndTheSummaryStillWritten) {
  EXPECT_EQ(signal_dlbench(path("i.json"), SIGINT), 128 + SIGINT);
  EXPECT_EQ(read_json("i.json")["signal"], SIGINT);
}

TEST_F(MonitorTest, WithoutNvmlHostMetricsOnlyAClearNoteAndTheSameExitCode) {
  auto r = monitor("--json " + path("h.json") + " -- sh -c 'exit 5'", kNoDriver);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  json s = read_json("h.json");
  EXPECT_TRUE(s["gpus"].empty());
  EXPECT_NE(s["gpus_none_reason"].get<std::string>().find("no NVIDIA driver"), std::string::npos);
  bool noted = false;
  for (const json& note : s["notes"])
    noted |= note.get<std::string>().find("host metrics only") != std::string::npos;
  EXPECT_TRUE(noted) << dump_json(s["notes"]);
  EXPECT_NE(r.err.find("host metrics only"), std::string::npos) << r.err;
  for (const auto& [name, value] : s["metrics"].items()) EXPECT_NE(name.rfind("gpu", 0), 0u);
  EXPECT_TRUE(s["metrics"].contains("process.cpu"));
  EXPECT_TRUE(s["metrics"].contains("system.cpu"));
}

// The NVML and GPM sources against a fake driver with known readings (children/fake_nvml.cc).
TEST_F(MonitorTest, FakeGpuIsSampledWithEveryFallbackAndReason) {
  auto r = monitor("--interval 0.2 --json " + path("g.json") + " -- sleep 1", kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("g.json");
  ASSERT_EQ(s["gpus"].size(), 1u) << s["gpus"];
  EXPECT_EQ(s["gpus"][0]["name"], "Fake GPU");
  EXPECT_EQ(s["gpus"][0]["pci_bus_id"], "0000:65:00.0");
  EXPECT_TRUE(s["gpus_none_reason"].is_null());
  auto mean = [&](const std::string& name) { return metric(s, "gpu0." + name)["mean"]; };
  EXPECT_NEAR(mean("kernel_busy").get<double>(), 97.0, 1e-6);
  EXPECT_NEAR(mean("memory_busy").get<double>(), 40.0, 1e-6);
  EXPECT_NEAR(mean("memory_used").get<double>(), 20.0 * (1 << 30),
              1.0);  // v1, after v2's version mismatch
  EXPECT_NEAR(mean("memory_total").get<double>(), 80.0 * (1 << 30), 1.0);
  EXPECT_EQ(metric(s, "gpu0.process_memory")["max"], 1.0 * (1 << 30));  // ours, not pid 1's
  EXPECT_NEAR(mean("power").get<double>(), 250.0, 1e-6);
  EXPECT_NEAR(mean("power_average").get<double>(), 240.0,
              1e-6);  // nvmlDeviceGetPowerUsage fallback
  EXPECT_NEAR(mean("energy").get<double>(), 300.0, 15.0);
  EXPECT_GT(metric(s, "gpu0.energy")["total"].get<double>(), 200.0);
  EXPECT_NEAR(mean("pcie_tx").get<double>(), 1e9, 5e7);
  EXPECT_NEAR(mean("sm_clock").get<double>(), 1980.0, 1e-6);
  EXPECT_NEAR(mean("temperature").get<double>(), 55.0, 1e-6);
  EXPECT_EQ(metric(s, "gpu0.clock_events")["mask"], 4);  // through the pre-R535 name
  EXPECT_EQ(metric(s, "gpu0.clock_events")["flags"], json::array({"sw_power_cap"}));
  // The fake reports the power cap at every reading: all of the window.
  EXPECT_EQ(metric(s, "gpu0.clock_events")["share_percent"], json({{"sw_power_cap", 100.0}}));
  EXPECT_NEAR(mean("sm_active").get<double>(), 91.0, 1e-6);
  EXPECT_NEAR(metric(s, "gpu0.sm_active")["window"].get<double>(), 91.0, 1e-6);
  EXPECT_NEAR(mean("tensor_active").get<double>(), 60.0, 1e-6);
  EXPECT_NEAR(mean("pcie_tx_gpm").get<double>(), 100.0 * (1 << 20), 1.0);
  const json& nvlink = metric(s, "gpu0.nvlink_tx");
  EXPECT_TRUE(nvlink["mean"].is_null());
  EXPECT_EQ(nvlink["unavailable"], "not supported by this GPU or driver");
  EXPECT_NE(metric(s, "gpu0.nvlink_rx_gpm")["unavailable"].get<std::string>().find("GPM: "),
            std::string::npos);
  std::string notes = dump_json(s["notes"]);
  EXPECT_NE(notes.find("nvmlDeviceGetPowerUsage"), std::string::npos) << notes;
  EXPECT_NE(notes.find("nvmlDeviceGetMemoryInfo v1"), std::string::npos) << notes;
  EXPECT_NE(r.err.find("GPU 0: Fake GPU (0000:65:00.0)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kernel_busy"), std::string::npos) << r.err;
}

// A run samples the GPUs it drives only: a CPU run on a machine with a (fake) GPU records no GPU
// metric, so no idle GPU's energy reaches it, and says why.
TEST_F(MonitorTest, ACpuRunSamplesNoGpu) {
  auto run = run_command(kFakeNvml + kDlbench + " --db " + path("r.db") +
                         " run resnet50 --device cpu --batch 2 --input 32 --warmup 1 --steps 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("no GPU telemetry (the run uses no GPU)"), std::string::npos) << run.out;
  auto exported = run_command(kDlbench + " --db " + path("r.db") + " runs export --format json");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const json runs = json::parse(exported.out)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_FALSE(runs[0]["telemetry"].empty());
  for (const json& m : runs[0]["telemetry"])
    EXPECT_NE(m["name"].get<std::string>().rfind("gpu", 0), 0u) << m["name"];
  EXPECT_EQ(runs[0].value("metrics", json::object()).count("energy/samples_per_joule"), 0u);
}

// From the sampler through the results database to the report: a run stored with the fake GPU's
// telemetry (power cap at every reading, as `monitor` sampled it) is flagged as throttled for
// all of it. CI has no GPU to run on, so the GPU's recording joins a CPU run's export, and the
// report reads it back from `runs import`.
TEST_F(MonitorTest, AStoredRunsReportSaysHowLongItsGpuWasThrottled) {
  auto sampled = monitor("--interval 0.2 --json " + path("g.json") + " -- sleep 1", kFakeNvml);
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  const json gpu = read_json("g.json")["metrics"];
  auto run = run_command(kFakeNvml + kDlbench + " --db " + path("cpu.db") +
                         " run resnet50 --device cpu --batch 2 --input 32 --warmup 1 --steps 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto exported = run_command(kDlbench + " --db " + path("cpu.db") + " runs export --format json");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  json file = json::parse(exported.out);
  // Into both places a stored run keeps it: the summary rows and the result's own telemetry.
  json& stored = file["runs"][0];
  for (const auto& [name, m] : gpu.items()) {
    if (name.rfind("gpu", 0) != 0) continue;  // the run has its own host metrics
    json entry = m;
    entry["name"] = name;
    stored["telemetry"].push_back(entry);
    stored["result"]["telemetry"]["metrics"][name] = m;
  }
  std::ofstream(path("gpu-run.json")) << dump_json(file);
  const std::string db = " --db " + path("r.db") + " ";
  auto imported = run_command(kDlbench + db + "runs import " + path("gpu-run.json"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto text = run_command(kDlbench + db + "report --last 1 --format text");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("throttled: power cap during 100 % of the run"), std::string::npos)
      << text.out;
  auto html = run_command(kDlbench + db + "report --last 1 --out " + path("r.html"));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::ifstream in(path("r.html"));
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<td class=\"flag\">throttled: power cap during 100 % of the run</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<h1>1x Fake GPU"), std::string::npos);
}

TEST_F(MonitorTest, GpmPairsSamplesAtLeast100msApartEvenAtTheShortestInterval) {
  auto r = monitor("--interval 0.1 --json " + path("p.json") + " -- sleep 1", kFakeNvml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = read_json("p.json");
  double samples = s["samples"];
  // The first sample has nothing to pair with; every later one does (the fake refuses pairs
  // closer than 100 ms).
  EXPECT_GE(metric(s, "gpu0.sm_active")["samples"].get<double>(), samples - 2) << samples;
}

TEST_F(MonitorTest, AGpuThatDoesNotExistIsAResourceErrorBeforeTheCommandRuns) {
  auto r = monitor("--gpus 0,3 -- touch " + path("ran"), kFakeNvml);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no GPU 3: NVML sees 1 GPU"), std::string::npos) << r.err;
  EXPECT_NE(access(path("ran").c_str(), F_OK), 0) << "the command ran";
}

TEST_F(MonitorTest, UnavailableMetricsAreNullWithAReasonNeverZero) {
  auto r = monitor("--json " + path("u.json") + " -- true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = read_json("u.json");  // the loop below must not iterate a temporary
  for (const auto& [name, m] : summary["metrics"].items()) {
    if (m.contains("unavailable")) {
      EXPECT_FALSE(m["unavailable"].get<std::string>().empty()) << name;
      EXPECT_TRUE(m.value("mean", json()).is_null()) << name;
    } else if (m["kind"] != "bitmask") {
      EXPECT_TRUE(m["mean"].is_number()) << name;
    }
  }
}

TEST_F(MonitorTest, TheCommandsOwnArgumentsAndStdoutPassThrough) {
  auto r = monitor("-- sh -c 'echo \"$@\"' x -q --json --interval 5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-q --json --interval 5\n");  // the summary goes to stderr
  EXPECT_NE(r.err.find("process.cpu"), std::string::npos) << r.err;
}

TEST_F(MonitorTest, BadInputGetsAOneLineMessageAHintAndItsExitCode) {
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const Case cases[] = {
      {"--interval 0.05 -- true", 2, "out of range"},
      {"--interval 61 -- true", 2, "out of range"},
      {"", 2, "no command to monitor"},
      {"--json /nonexistent-dir/x.json -- true", 3, "cannot write /nonexistent-dir/x.json"},
      {"--csv /nonexistent-dir/x.csv -- true", 3, "cannot write /nonexistent-dir/x.csv"},
      {"--gpus zero -- true", 2, "bad GPU list"},
      {"-- /nonexistent/command", 127, "cannot run"},
      {"-- /etc/passwd", 126, "cannot run"},
  };
  for (const Case& c : cases) {
    auto r = monitor(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find("dlbench: "), std::string::npos) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find("hint: "), std::string::npos) << c.args << ": " << r.err;
  }
}

// The summary files replace earlier ones only once written: a command that cannot even start
// leaves them as they were, and no temporary file behind.
TEST_F(MonitorTest, ACommandThatCannotStartLeavesEarlierFilesAsTheyWere) {
  for (const char* name : {"m.json", "m.csv"}) std::ofstream(path(name)) << "earlier " << name;
  auto r = monitor("--json " + path("m.json") + " --csv " + path("m.csv") + " -- /nonexistent/x");
  EXPECT_EQ(r.exit_code, 127) << r.err;
  for (const char* name : {"m.json", "m.csv"}) {
    std::ifstream in(path(name));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, std::string("earlier ") + name);
  }
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 2u) << "a temporary file was left in " << dir_;
}

TEST_F(MonitorTest, HelpShowsTheUsage) {
  auto r = run_command(kDlbench + " monitor --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--interval"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-- CMD ARGS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace dlbench
