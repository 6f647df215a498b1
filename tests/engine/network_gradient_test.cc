// Whole-network gradients against central finite differences of the loss: the layers, the
// graph's gradient routing (fan-out accumulation) and the parameter binding together.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/convolution.h"
#include "engine/nn/losses/soft_dice.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/finite_differences.h"

namespace dlbench {
namespace {

// A step that moves the loss by about 1e-4 (ProbeSteps' default) keeps each probe in the linear
// regime even for the stem weights, whose gradients reach 1e2 through batch norm, and above f32
// rounding noise.
constexpr int kProbes = 60;

void expect_network_gradients(const char* model, int width_divisor) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& info = models::find_model(model);
  models::ModelConfig mc;
  mc.batch = 2;
  mc.size = 32;
  mc.width_divisor = width_divisor;
  mc = models::resolve(info, mc);
  nn::TrainerConfig nc;
  nc.optimizer.learning_rate = 0.0f;  // lr 0: a train step computes gradients and moves nothing
  nc.optimizer.momentum = 0.0f;
  nn::Graph graph = info.build(mc);
  nn::Trainer net(std::move(graph), *be, nc);
  data::SyntheticSource source(net.graph().input_specs(), 3);
  source.fill(*be, net.inputs());
  const std::vector<double> analytic = test::step_gradients(net);
  const double rel = test::relative_error(
      test::probe_gradients(net, analytic, test::pick_probes(analytic, kProbes, 5)));
  std::printf("%s: relative gradient error %.2e over %d probes\n", model, rel, kProbes);
  EXPECT_LT(rel, 5e-2);
}

TEST(NetworkGradientTest, Vgg16) {
  expect_network_gradients("vgg16", 16);
}
TEST(NetworkGradientTest, ResNet50) {
  expect_network_gradients("resnet50", 16);
}
// Transposed convolutions, the skip connections' concatenations, and Dice plus cross-entropy
// on the same scores.
TEST(NetworkGradientTest, UNet) {
  expect_network_gradients("unet", 16);
}
// Instance norm, strided 3D convolutions and 3D transposed convolutions, joined by concats.
TEST(NetworkGradientTest, UNet3d) {
  expect_network_gradients("unet3d", 16);
}

// Two losses on one value, as U-Net has them: Dice and cross-entropy on the same per-pixel
// scores. Losses run last first, so the cross-entropy (added last) writes the scores' gradient
// and the Dice adds to it; the convolution's gradient is then that of the summed loss.
TEST(NetworkGradientTest, TwoLossesOnTheSameScoresAddTheirGradients) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g;
  const nn::ValueId images =
      g.add_input({"images", {2, 4, 4, 2}, DType::kF32, data::normal(0.0, 1.0), "images (NHWC)"});
  const nn::ValueId labels =
      g.add_input({"labels", {2, 4, 4}, DType::kI32, data::uniform_int(0, 3), "a class per pixel"});
  backend::ConvParams p;
  p.n = 2, p.h = p.w = 4, p.c = 2, p.k = 3, p.r = p.s = 3, p.pad_h = p.pad_w = 1;
  const nn::ValueId scores = g.add("conv", std::make_unique<nn::Convolution>(p), {images});
  g.mark_output(scores);
  g.add("dice", std::make_unique<nn::SoftDice>(1), {scores, labels});
  g.add("cross_entropy", std::make_unique<nn::SoftmaxCrossEntropy>(), {scores, labels});
  nn::TrainerConfig nc;
  nc.optimizer.learning_rate = 0.0f;
  nc.optimizer.momentum = 0.0f;
  nn::Trainer net(std::move(g), *be, nc);
  data::SyntheticSource(net.graph().input_specs(), 5).fill(*be, net.inputs());
  const std::vector<double> analytic = test::step_gradients(net);
  const double rel = test::relative_error(
      test::probe_gradients(net, analytic, test::pick_probes(analytic, 30, 3)));
  EXPECT_LT(rel, 1e-2);
}

}  // namespace
}  // namespace dlbench
