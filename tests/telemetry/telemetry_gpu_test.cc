// dlbench monitor around GPU children (labelled gpu): a cuBLAS FP16 GEMM loop must look busy
// by every measure, and a single spinning 32-thread block must look "kernel busy" while GPM
// shows the SMs idle: the honest labelling in action. Every measured value is printed, so the
// output can be quoted. Figures are taken over the child's steady phase, from the CSV samples.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <filesystem>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/json_text.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;

const std::string kDlbench = DLBENCH_BINARY;
constexpr double kChildSeconds = 6.0;
constexpr double kInterval = 0.2;
// Skip this much after the child's steady mark: NVML averages utilization over up to 1 s, so
// earlier samples still see the child's start-up.
constexpr double kSettleS = 1.2;

struct MonitoredRun {
  json summary;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // NaN for an empty cell
  double steady_unix_s = 0, end_unix_s = 0;
  std::string stdout_text, stderr_text;
  int exit_code = 0;
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

MonitoredRun monitor(const std::string& command) {
  char dir[] = "/tmp/dlbench-gpu-test-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  std::string base = dir;
  auto r =
      testing::run_command(kDlbench + " monitor --interval " + std::to_string(kInterval) +
                           " --json " + base + "/s.json --csv " + base + "/s.csv -- " + command);
  MonitoredRun run;
  run.exit_code = r.exit_code;
  run.stdout_text = r.out;
  run.stderr_text = r.err;
  std::ifstream json_in(base + "/s.json");
  if (json_in) run.summary = json::parse(json_in);
  std::ifstream csv(base + "/s.csv");
  std::string line;
  if (std::getline(csv, line)) run.columns = split(line);
  while (std::getline(csv, line)) {
    std::vector<double> row;
    for (const std::string& cell : split(line))
      row.push_back(cell.empty() ? std::nan("") : std::atof(cell.c_str()));
    run.rows.push_back(row);
  }
  std::sscanf(r.out.c_str() + std::min(r.out.size(), r.out.find("steady_unix_s=")),
              "steady_unix_s=%lf", &run.steady_unix_s);
  auto end = r.out.find("end_unix_s=");
  if (end != std::string::npos) std::sscanf(r.out.c_str() + end, "end_unix_s=%lf", &run.end_unix_s);
  std::error_code ignored;
  std::filesystem::remove_all(base, ignored);
  return run;
}

// The NVML index of CUDA device 0, matched by PCI bus id ("0000:65:00.0").
int nvml_index_of_cuda_device_0(const json& summary) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) return -1;
  std::string want;
  for (char c : std::string(bus)) want += static_cast<char>(std::tolower(c));
  if (want.size() > 12) want = want.substr(want.size() - 12);
  for (const json& gpu : summary["gpus"])
    if (gpu["pci_bus_id"].is_string() && gpu["pci_bus_id"].get<std::string>() == want)
      return gpu["index"];
  return -1;
}

struct Steady {
  double mean = std::nan("");
  std::size_t samples = 0;
};

// Mean of a column over the samples inside the child's steady phase.
Steady steady_mean(const MonitoredRun& run, const std::string& metric) {
  Steady s;
  std::size_t col = 0;
  while (col < run.columns.size() && run.columns[col].rfind(metric + " [", 0) != 0) ++col;
  if (col == run.columns.size()) return s;
  double sum = 0;
  for (const auto& row : run.rows) {
    if (row.size() <= col || row[0] < run.steady_unix_s + kSettleS ||
        row[0] > run.end_unix_s - 0.05 || std::isnan(row[col]))
      continue;
    sum += row[col];
    ++s.samples;
  }
  if (s.samples > 0) s.mean = sum / static_cast<double>(s.samples);
  return s;
}

std::string why(const json& summary, const std::string& metric) {
  const json& m = summary["metrics"][metric];
  return m.contains("unavailable") ? m["unavailable"].get<std::string>() : "available";
}

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(TelemetryGpuTest, GemmLoopIsBusyByEveryMeasure) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  MonitoredRun idle = monitor("sleep 2");
  ASSERT_EQ(idle.exit_code, 0) << idle.stderr_text;
  int gpu = nvml_index_of_cuda_device_0(idle.summary);
  ASSERT_GE(gpu, 0) << "CUDA device 0 not among the sampled GPUs: " << idle.summary["gpus"];
  std::string p = "gpu" + std::to_string(gpu) + ".";
  double idle_power = idle.summary["metrics"][p + "power"]["mean"].is_number()
                          ? idle.summary["metrics"][p + "power"]["mean"].get<double>()
                          : std::nan("");

  MonitoredRun run =
      monitor(std::string(TELEMETRY_GEMM_CHILD) + " " + std::to_string(kChildSeconds));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  ASSERT_GT(run.end_unix_s, run.steady_unix_s) << run.stdout_text;
  std::printf("%s%s\n", run.stdout_text.c_str(), run.stderr_text.c_str());

  Steady busy = steady_mean(run, p + "kernel_busy");
  Steady sm = steady_mean(run, p + "sm_active");
  Steady occupancy = steady_mean(run, p + "sm_occupancy");
  Steady tensor = steady_mean(run, p + "tensor_active");
  Steady dram = steady_mean(run, p + "dram_active");
  Steady power = steady_mean(run, p + "power");
  const json& energy = run.summary["metrics"][p + "energy"];
  const json& process_memory = run.summary["metrics"][p + "process_memory"];
  std::printf(
      "GEMM steady phase (%zu samples): kernel busy %.1f %%, SM activity %.1f %%, SM occupancy "
      "%.1f %%, tensor activity %.1f %%, DRAM %.1f %%, power %.0f W (idle %.0f W), energy %s J "
      "(mean %s W), process GPU memory max %s B\n",
      busy.samples, busy.mean, sm.mean, occupancy.mean, tensor.mean, dram.mean, power.mean,
      idle_power, dump_json(energy["total"]).c_str(), dump_json(energy["mean"]).c_str(),
      dump_json(process_memory["max"]).c_str());

  ASSERT_GE(busy.samples, 10u) << "too few steady samples";
  EXPECT_GE(busy.mean, 95.0);
  ASSERT_TRUE(energy["total"].is_number()) << why(run.summary, p + "energy");
  EXPECT_GT(energy["total"].get<double>(), 0.0);
  ASSERT_FALSE(std::isnan(power.mean)) << why(run.summary, p + "power");
  ASSERT_FALSE(std::isnan(idle_power)) << why(idle.summary, p + "power");
  EXPECT_GT(power.mean, idle_power + 30.0);
  // Three 128 MiB matrices and the context: the v3 process list must find our child (a wrong
  // struct layout would match no PID and read 0). In a container the driver may list host
  // PIDs; then the metric says so and is not checked.
  if (process_memory["max"].is_number())
    EXPECT_GE(process_memory["max"].get<double>(), 384.0 * 1024 * 1024);
  else
    std::printf("process_memory not checked: %s\n", why(run.summary, p + "process_memory").c_str());
  if (std::isnan(sm.mean))
    GTEST_SKIP() << "GPM unavailable on this GPU: " << why(run.summary, p + "sm_active");
  EXPECT_GE(sm.mean, 90.0);
  EXPECT_GT(tensor.mean, 0.0);
}

TEST(TelemetryGpuTest, OneSpinningBlockIsKernelBusyButSmIdle) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  MonitoredRun run =
      monitor(std::string(TELEMETRY_SPIN_CHILD) + " " + std::to_string(kChildSeconds));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  int gpu = nvml_index_of_cuda_device_0(run.summary);
  ASSERT_GE(gpu, 0) << run.summary["gpus"];
  std::string p = "gpu" + std::to_string(gpu) + ".";
  std::printf("%s%s\n", run.stdout_text.c_str(), run.stderr_text.c_str());
  Steady busy = steady_mean(run, p + "kernel_busy");
  Steady sm = steady_mean(run, p + "sm_active");
  Steady occupancy = steady_mean(run, p + "sm_occupancy");
  std::printf(
      "one 32-thread block (%zu samples): kernel busy %.1f %%, SM activity %.2f %%, SM "
      "occupancy %.2f %%\n",
      busy.samples, busy.mean, sm.mean, occupancy.mean);
  ASSERT_GE(busy.samples, 10u);
  EXPECT_GE(busy.mean, 90.0);
  if (std::isnan(sm.mean))
    GTEST_SKIP() << "GPM unavailable on this GPU: " << why(run.summary, p + "sm_active");
  EXPECT_LT(sm.mean, 5.0);
}

}  // namespace
}  // namespace dlbench
