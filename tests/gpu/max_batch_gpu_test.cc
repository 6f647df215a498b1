// A CUDA out-of-memory error during a run is an answer, not an end: the run at a huge batch fails
// with a resource error, every buffer of it is freed, no CUDA error stays behind, and a smaller
// run in the same process then trains; the search built on that finds a batch after failures.
// A run also says how much of its peak is the backend's workspace.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "bench/runner/max_batch.h"
#include "bench/runner/workload_runner.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"

namespace dlbench {
namespace {

result::RunConfig small_run(std::int64_t batch) {
  result::RunConfig c;
  c.model = "resnet50";
  c.launch.device = Device::cuda(0);
  c.input_size = 32;
  c.batch = batch;
  c.warmup_steps = 0;
  c.steps = 2;
  c.telemetry = false;
  return c;
}

TEST(MaxBatchGpuTest, AnOutOfMemoryRunLeavesTheGpuUsable) {
  if (backend::cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
  std::size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  result::RunConfig huge = small_run(std::int64_t{1} << 22);
  huge.input_size = 224;
  try {
    runner::run_workload(huge);
    FAIL() << "batch 4M of ResNet-50 at 224 px fit in " << total << " bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  // Everything the failed run allocated is back (allowing for the runtime's own bookkeeping).
  EXPECT_GE(free_after + (std::size_t{64} << 20), free_before);
  const result::RunResult ok = runner::run_workload(small_run(4));
  EXPECT_EQ(ok.measured_steps, 2);
  EXPECT_GT(ok.throughput, 0);
}

double metric(const result::RunResult& r, const std::string& tag) {
  for (const result::Metric& m : r.metrics)
    if (m.tag == tag) return m.value;
  ADD_FAILURE() << "no metric " << tag;
  return 0;
}

// The run says how much of its peak is the backend's workspace: held through the measured steps
// beside the planned memory, so both fit in the peak.
TEST(MaxBatchGpuTest, TheWorkspaceIsPartOfThePeak) {
  if (backend::cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
  const result::RunResult r = runner::run_workload(small_run(8));
  const double workspace = metric(r, "memory/workspace_gib"),
               planned = metric(r, "memory/planned_gib"),
               peak = metric(r, "memory/allocated_peak_gib");
  std::printf("planned %.4f GiB, workspace %.4f GiB, peak %.4f GiB\n", planned, workspace, peak);
  EXPECT_GT(workspace, 0.0);  // ResNet-50's convolutions ask for some at this size
  EXPECT_LE(planned + workspace, peak * (1 + 1e-9));
}

TEST(MaxBatchGpuTest, TheSearchFitsABatchAfterOutOfMemoryAttempts) {
  if (backend::cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
  runner::MaxBatchSearch search;
  search.config = small_run(1);
  search.config.steps = 1;
  search.config.memory_limit_bytes = std::size_t{1} << 30;
  search.first_batch = 1 << 16;
  const result::MaxBatchResult r = runner::find_max_batch(search);
  ASSERT_GE(r.attempts.size(), 2u);
  EXPECT_FALSE(r.attempts[0].fits);
  EXPECT_GT(r.batch, 0);
  EXPECT_LT(r.batch, 1 << 16);
  EXPECT_GT(r.throughput, 0);
  EXPECT_LE(r.measured_peak_bytes, double(std::size_t{1} << 30));
}

}  // namespace
}  // namespace dlbench
