// CUDA negative sampling's step counter lives on the device, so each replay of one recorded
// sampling call draws new negatives, the ones the CPU backend draws at the same step. Single
// calls are harness cases (tests/ops/cases/sampling_cases.cc).
#include <cstdint>
#include <vector>

#include "tests/gpu/cuda_test_util.h"

namespace dlbench::gpu_test {
namespace {

using SamplingGpu = GpuOpTest;

Tensor host_i32(std::vector<std::int32_t>& v) {
  return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kI32, Device::cpu());
}

TEST_F(SamplingGpu, RecordedSamplingDrawsAnewAtEachReplay) {
  constexpr std::int64_t kPositives = 300, kBatch = 1500, kItems = 3706;
  const backend::NegativeSamplingParams p{kItems, 99};
  std::vector<std::int32_t> users_pos(kPositives), items_pos(kPositives);
  std::vector<float> users_f(kPositives), items_f(kPositives);
  for (std::int64_t i = 0; i < kPositives; ++i) {
    users_pos[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * 7 % 6040);
    items_pos[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * 13 % kItems);
    users_f[static_cast<std::size_t>(i)] =
        static_cast<float>(users_pos[static_cast<std::size_t>(i)]);
    items_f[static_cast<std::size_t>(i)] =
        static_cast<float>(items_pos[static_cast<std::size_t>(i)]);
  }
  GpuTensor step(gpu(), {1}, DType::kI32), up(gpu(), {kPositives}, DType::kI32),
      ip(gpu(), {kPositives}, DType::kI32), users(gpu(), {kBatch}, DType::kI32),
      items(gpu(), {kBatch}, DType::kI32), labels(gpu(), {kBatch, 1}, DType::kF16);
  step.upload({0.0f}), up.upload(users_f), ip.upload(items_f);
  gpu().begin_capture();
  gpu().sample_negatives(p, step.tensor(), up.tensor(), ip.tensor(), users.tensor(), items.tensor(),
                         labels.tensor());
  std::unique_ptr<backend::DeviceGraph> graph = gpu().end_capture();
  ASSERT_NE(graph, nullptr);

  std::int32_t cpu_step = 0;
  std::vector<std::int32_t> cpu_users(kBatch), cpu_items(kBatch);
  std::vector<float> cpu_labels(kBatch);
  std::vector<float> previous;
  for (int replay = 1; replay <= 3; ++replay) {
    graph->launch();
    cpu().sample_negatives(p, Tensor(&cpu_step, {1}, DType::kI32, Device::cpu()),
                           host_i32(users_pos), host_i32(items_pos), host_i32(cpu_users),
                           host_i32(cpu_items),
                           Tensor(cpu_labels.data(), {kBatch, 1}, DType::kF32, Device::cpu()));
    gpu().synchronize();
    const std::vector<float> drawn = items.download();
    EXPECT_EQ(drawn, std::vector<float>(cpu_items.begin(), cpu_items.end())) << replay;
    EXPECT_EQ(users.download(), std::vector<float>(cpu_users.begin(), cpu_users.end())) << replay;
    EXPECT_EQ(labels.download(), cpu_labels) << replay;
    EXPECT_EQ(step.download(), std::vector<float>{static_cast<float>(replay)});
    EXPECT_NE(drawn, previous) << "replay " << replay << " drew the last replay's negatives";
    previous = drawn;
  }
}

}  // namespace
}  // namespace dlbench::gpu_test
