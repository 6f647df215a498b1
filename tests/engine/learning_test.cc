// Learning is real: full ResNet-50 and VGG16 architectures (small width, 32x32 input) drive
// the loss on one fixed synthetic batch of 8 to under 5 % of its first value; U-Net its Dice
// plus cross-entropy on blob scenes to under a fifth, and 3D U-Net on blob volumes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

constexpr std::int64_t kBatch = 8;
constexpr double kTargetRatio = 0.05;

struct LearningCase {
  const char* model;
  int width_divisor;
  float learning_rate;
  int max_steps;
  double target_ratio = kTargetRatio;
};

void expect_learns(const LearningCase& c) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& info = models::find_model(c.model);
  models::ModelConfig mc;
  mc.batch = kBatch;
  mc.size = 32;
  mc.width_divisor = c.width_divisor;
  mc = models::resolve(info, mc);
  nn::TrainerConfig nc;
  nc.optimizer.learning_rate = c.learning_rate;
  nc.optimizer.momentum = 0.9f;
  nn::Graph graph = info.build(mc);
  nn::Trainer net(std::move(graph), *be, nc);
  data::SyntheticSource source(net.graph().input_specs(), 7);
  source.fill(*be, net.inputs());

  net.train_step();
  const float first = net.loss();
  ASSERT_TRUE(std::isfinite(first));
  float loss = first;
  int step = 1;
  for (; step < c.max_steps && loss > c.target_ratio * first; ++step) {
    net.train_step();
    loss = net.loss();
    ASSERT_TRUE(std::isfinite(loss)) << "step " << step;
  }
  std::printf("%s (width / %d): loss %.4f -> %.4f in %d steps\n", c.model, c.width_divisor, first,
              loss, step);
  EXPECT_LT(loss, c.target_ratio * first) << "after " << step << " steps";
}

TEST(LearningTest, ResNet50DrivesTheLossDown) {
  expect_learns({"resnet50", 8, 0.02f, 300});
}

// VGG has no batch norm: at larger rates this tiny-width copy collapses to a constant output
// (loss stuck near 1.5), the known fragility of plain deep ReLU stacks, so it gets a small lr.
// Where the collapse starts depends on the CPU's kernels: 0.005 learned on one machine and
// collapsed on an AMD EPYC without AVX-512; 0.002 learns on both in ~40 steps (0.001 in ~55).
TEST(LearningTest, Vgg16DrivesTheLossDown) {
  expect_learns({"vgg16", 8, 0.002f, 300});
}

// U-Net on its blob scenes. Dice cannot fall to 0 for a class a slice lacks (1 - s / (P + s)
// is near 1 until the predicted mass P of that class is below the smoothing 1e-6), so the loss
// is held to a fifth of its first value, not 5 % (it levels out near a tenth).
TEST(LearningTest, UNetDrivesTheLossDown) {
  expect_learns({"unet", 8, 0.05f, 300, 0.2});
}
// 3D U-Net on blob volumes (32^3, width / 16). A volume has a lesion in about half of its organs
// draws, and the lesion Dice of a volume without one stays near 0 (the floor above): that floor
// is about a quarter of the first loss here, so the loss is held to 0.3 of it.
TEST(LearningTest, UNet3dDrivesTheLossDown) {
  expect_learns({"unet3d", 16, 0.05f, 300, 0.3});
}

// A model with its own optimizer (Adam, lazy Adam on its tables) at batch 256 and lr 0.01, on
// a fixed synthetic batch whose negatives are drawn anew each step: the binary cross-entropy
// starts at ln 2 (every logit near 0) and falls below `ratio` of it within `max_steps`.
void expect_binary_loss_falls(const char* model, float ratio, int max_steps) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& info = models::find_model(model);
  models::ModelConfig mc;
  mc.batch = 256;
  nn::TrainerConfig nc;
  nc.optimizer = info.default_optimizer;
  nc.optimizer.learning_rate = 0.01f;
  nn::Trainer net(info.build(models::resolve(info, mc)), *be, nc);
  data::SyntheticSource source(net.graph().input_specs(), 7);
  source.fill(*be, net.inputs());
  net.train_step();
  const float first = net.loss();
  EXPECT_NEAR(first, std::log(2.0f), 0.01f);
  float loss = first;
  int step = 1;
  for (; step < max_steps && loss > ratio * first; ++step) {
    net.train_step();
    loss = net.loss();
    ASSERT_TRUE(std::isfinite(loss)) << model << ", step " << step;
  }
  std::printf("%s: loss %.4f -> %.4f in %d steps\n", model, first, loss, step);
  EXPECT_LT(loss, ratio * first) << model << ", after " << step << " steps";
}

// NCF learns to tell a fixed set of 52 positive pairs from the 204 negatives drawn each step.
TEST(LearningTest, NcfDrivesTheLossDown) {
  expect_binary_loss_falls("ncf", kTargetRatio, 200);
}

// Word2Vec learns 256 (word, context) pairs against 5 negatives each: to half of ln 2 (its
// output vectors start at 0, so the first steps move the input vectors not at all).
TEST(LearningTest, Word2VecDrivesTheLossDown) {
  expect_binary_loss_falls("word2vec", 0.5f, 400);
}

}  // namespace
}  // namespace dlbench
