// The Dropout layer through its own forward and backward on the CPU backend: training drops
// about p of the elements with a fresh mask per step (its counter in the layer's state) and
// backward passes the gradient through the same mask; inference passes x on unchanged; and
// a probability outside [0, 1) is refused when the model is built.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/nn/layers/dropout.h"

namespace dlbench::nn {
namespace {

constexpr std::int64_t kN = 10'000;

struct LayerRun {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  Dropout layer{0.25f, 11};
  std::vector<float> x = std::vector<float>(kN, 2.0f), y = std::vector<float>(kN, -1.0f);
  std::vector<float> dy = std::vector<float>(kN, 1.0f), dx = std::vector<float>(kN, -1.0f);
  std::int32_t step = 0;
  static Tensor of(std::vector<float>& v) {
    return Tensor(v.data(), {kN}, DType::kF32, Device::cpu());
  }
  void run(Mode mode, bool backward) {
    const Tensor in[] = {of(x)}, out[] = {of(y)},
                 state[] = {Tensor(&step, {1}, DType::kF32, Device::cpu())};
    const Tensor out_grad[] = {of(dy)}, in_grad[] = {of(dx)};
    const GradMode modes[] = {GradMode::kOverwrite};
    const StepContext ctx{*be, mode, in, out, {}, state, out_grad, in_grad, modes, {}, {}};
    if (backward)
      layer.backward(ctx);
    else
      layer.forward(ctx);
  }
};

TEST(DropoutLayer, TrainingDropsWithAFreshMaskAndBackwardReusesIt) {
  LayerRun r;
  r.run(Mode::kTrain, false);
  const std::vector<float> first = r.y;
  std::int64_t kept = 0;
  for (float v : first) {
    ASSERT_TRUE(v == 0.0f || v == 2.0f / 0.75f) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / kN, 0.75, 0.02);
  EXPECT_EQ(r.step, 1);
  r.run(Mode::kTrain, false);
  EXPECT_NE(r.y, first);  // the next step draws anew
  r.run(Mode::kTrain, true);
  for (std::int64_t i = 0; i < kN; ++i) ASSERT_EQ(r.dx[i], r.y[i] / 2.0f) << i;
  EXPECT_EQ(r.step, 2);
}

TEST(DropoutLayer, InferencePassesXOnAndBadProbabilitiesAreRefused) {
  LayerRun r;
  r.run(Mode::kInfer, false);
  EXPECT_EQ(r.y, r.x);
  EXPECT_EQ(r.step, 0);
  EXPECT_THROW(Dropout(1.0f, 1), Error);
  EXPECT_THROW(Dropout(-0.5f, 1), Error);
}

}  // namespace
}  // namespace dlbench::nn
