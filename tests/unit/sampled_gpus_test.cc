// The GPUs a run's telemetry samples (bench/runner/sampled_gpus.h): the run's own CUDA devices
// by NVML index, never every GPU of the machine, and none, saying why, for a CPU run or where
// NVML lists none of them.
#include "bench/runner/sampled_gpus.h"

#include <gtest/gtest.h>

namespace dlbench::runner {
namespace {

using telemetry::GpuSelection;

// Four GPUs that NVML and CUDA number in opposite orders: NVML i is cuda:(3 - i).
sysinfo::GpuReport reversed_machine() {
  sysinfo::GpuReport report;
  for (int i = 0; i < 4; ++i) {
    sysinfo::GpuInfo gpu;
    gpu.nvml_index = Reported<int>::of(i);
    gpu.cuda_index = Reported<int>::of(3 - i);
    report.gpus.push_back(gpu);
  }
  return report;
}

result::Launch on(LaunchMode mode, Device device, int gpus = 1) {
  result::Launch launch;
  launch.mode = mode;
  launch.device = device;
  launch.gpus = gpus;
  return launch;
}

TEST(SampledGpusTest, AOneGpuRunSamplesItsOwnGpuOnly) {
  const GpuSelection s =
      sampled_gpus(on(LaunchMode::kSingle, Device::cuda(1)), 1, reversed_machine());
  EXPECT_EQ(s.mode, GpuSelection::Mode::kList);
  EXPECT_EQ(s.indices, (std::vector<unsigned>{2}));
}

TEST(SampledGpusTest, AThreadLaunchSamplesTheGpusItDrives) {
  const GpuSelection s =
      sampled_gpus(on(LaunchMode::kThreads, Device::cuda(0), 2), 1, reversed_machine());
  EXPECT_EQ(s.mode, GpuSelection::Mode::kList);
  EXPECT_EQ(s.indices, (std::vector<unsigned>{3, 2}));
}

TEST(SampledGpusTest, AnMpiRankSamplesItsNodesRanksGpus) {
  const result::Launch launch = on(LaunchMode::kMpi, Device::cuda(0));
  EXPECT_EQ(node_cuda_devices(launch, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(sampled_gpus(launch, 3, reversed_machine()).indices, (std::vector<unsigned>{3, 2, 1}));
}

TEST(SampledGpusTest, ACpuRunSamplesNoGpuAndSaysWhy) {
  const GpuSelection s =
      sampled_gpus(on(LaunchMode::kSingle, Device::cpu()), 1, reversed_machine());
  EXPECT_EQ(s.mode, GpuSelection::Mode::kNone);
  EXPECT_EQ(s.none_reason, "the run uses no GPU");
  EXPECT_TRUE(node_cuda_devices(on(LaunchMode::kMpi, Device::cpu()), 4).empty());
}

TEST(SampledGpusTest, AGpuNvmlDoesNotListSamplesNothingAndSaysWhy) {
  sysinfo::GpuReport report;
  sysinfo::GpuInfo gpu;
  gpu.nvml_index = Reported<int>::missing("libnvidia-ml.so.1 not found");
  gpu.cuda_index = Reported<int>::of(0);
  report.gpus.push_back(gpu);
  const GpuSelection s = sampled_gpus(on(LaunchMode::kSingle, Device::cuda(0)), 1, report);
  EXPECT_EQ(s.mode, GpuSelection::Mode::kNone);
  EXPECT_EQ(s.none_reason, "NVML does not list cuda:0 (libnvidia-ml.so.1 not found)");
}

}  // namespace
}  // namespace dlbench::runner
