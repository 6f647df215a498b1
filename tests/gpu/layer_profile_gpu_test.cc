// The per-layer profiler on cuda:0: CUDA events recorded on the backend's stream give every
// layer a non-negative forward and backward time that add up to the step, in fp32 and fp16
// training and in inference; the event timer itself reads the time of queued work. Labelled
// gpu; skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>

#include "bench/runner/layer_profiler.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/synthetic.h"
#include "engine/nn/trainer.h"
#include "tests/gpu/small_resnet.h"

namespace dlbench {
namespace {

constexpr double kSumTolerance = 1e-3;  // ms: event times are floats
constexpr int kProfiledSteps = 3;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

result::LayerProfile profile(Mode mode, Precision precision) {
  auto be = backend::make_backend(Device::cuda(0));
  nn::TrainerConfig nc;
  nc.mode = mode;
  nc.precision = precision;
  // Low enough that no fp16 step overflows and skips its update.
  nc.initial_loss_scale = 1024.0f;
  nn::Trainer net(gpu_test::small_resnet50(precision), *be, nc);
  data::SyntheticSource source(net.graph().input_specs(), 5);
  source.fill(*be, net.inputs());
  auto step = [&](int) {
    if (mode == Mode::kTrain)
      net.train_step();
    else
      net.infer_step();
  };
  step(0);  // cuDNN measures its algorithms in the first step
  be->synchronize();
  result::LayerProfile p = runner::profile_layers(net, *be, kProfiledSteps, step);
  EXPECT_EQ(p.layers.size(), net.graph().layer_count());
  return p;
}

void expect_adds_up(const result::LayerProfile& p, bool train) {
  EXPECT_EQ(p.steps, kProfiledSteps);
  EXPECT_NE(p.clock.find("CUDA events on cuda:0"), std::string::npos) << p.clock;
  EXPECT_GT(p.step_ms, 0.0);
  for (const auto& l : p.layers) {
    EXPECT_GE(l.forward_ms, 0.0) << l.name;
    EXPECT_GE(l.backward_ms, 0.0) << l.name;
    EXPECT_TRUE(train || l.backward_ms == 0.0) << l.name << ": backward time in inference";
  }
  for (const auto& g : p.gaps) EXPECT_GE(g.ms, 0.0) << g.name;
  EXPECT_NEAR(p.layers_ms + p.parts_ms + p.gaps_ms, p.step_ms, kSumTolerance);
  double shares = 0;
  for (const auto& k : p.kinds) shares += k.share;
  EXPECT_NEAR(shares, 1.0, 1e-6);
  EXPECT_EQ(p.parts.empty(), !train);
  std::printf("%s: step %.3f ms = layers %.3f + parts %.3f + gaps %.3f\n", p.clock.c_str(),
              p.step_ms, p.layers_ms, p.parts_ms, p.gaps_ms);
}

TEST(LayerProfileGpuTest, Fp32TrainingOnEvents) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_adds_up(profile(Mode::kTrain, Precision::kFp32), true);
}

TEST(LayerProfileGpuTest, Fp16TrainingShowsTheCastAndCheckAsAGap) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const result::LayerProfile p = profile(Mode::kTrain, Precision::kFp16);
  expect_adds_up(p, true);
  bool gap = false;
  for (const auto& g : p.gaps) gap |= g.name == "between backward and update" && g.ms > 0;
  EXPECT_TRUE(gap) << "the fp16 gradient cast and finite check run between backward and update";
}

TEST(LayerProfileGpuTest, InferenceOnEvents) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_adds_up(profile(Mode::kInfer, Precision::kFp32), false);
}

TEST(LayerProfileGpuTest, EventTimerReadsQueuedWork) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  auto be = backend::make_backend(Device::cuda(0));
  constexpr std::int64_t kFloats = std::int64_t{1} << 26;  // 256 MiB: well over a microsecond
  Buffer buffer(be->allocator(), kFloats * sizeof(float));
  Tensor t(buffer.data(), {kFloats}, DType::kF32, be->device());
  std::unique_ptr<backend::DeviceTimer> timer = be->make_timer(3);
  EXPECT_EQ(timer->capacity(), 3u);
  timer->mark(0);
  be->fill(t, 1.0f);
  timer->mark(1);
  timer->mark(2);
  be->synchronize();
  EXPECT_GT(timer->elapsed_ms(0, 1), 0.0);
  EXPECT_GE(timer->elapsed_ms(1, 2), 0.0);
  EXPECT_LT(timer->elapsed_ms(1, 2), timer->elapsed_ms(0, 1));
  EXPECT_THROW(timer->mark(3), Error);
}

}  // namespace
}  // namespace dlbench
