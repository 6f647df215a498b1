// Whole-network gradients against central finite differences of the loss: the layers, the
// graph's gradient routing (fan-out accumulation) and the parameter binding together.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

// A step that moves the loss by about 1e-4 keeps each probe in the linear regime even for the
// stem weights, whose gradients reach 1e2 through batch norm, and above f32 rounding noise.
constexpr double kLossMove = 1e-4;
constexpr double kMinStep = 1e-5, kMaxStep = 1e-2;
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
  auto loss = [&] {
    net.train_step();
    return static_cast<double>(net.loss());
  };
  loss();
  float* w = net.flat_weights().data_as<float>();
  const float* g = net.flat_grads().data_as<float>();
  const std::int64_t n = net.parameter_count();
  std::vector<double> analytic(g, g + n);

  // Probe the largest-gradient entries (where f32 differences are meaningful) and random ones.
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::partial_sort(order.begin(), order.begin() + kProbes / 2, order.end(), [&](auto a, auto b) {
    return std::fabs(analytic[a]) > std::fabs(analytic[b]);
  });
  std::vector<std::int64_t> probes(order.begin(), order.begin() + kProbes / 2);
  std::mt19937 rng(5);
  for (int i = 0; i < kProbes / 2; ++i)
    probes.push_back(std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng));

  double diff = 0, norm = 0;
  for (std::int64_t i : probes) {
    const float step = static_cast<float>(
        std::clamp(kLossMove / std::max(std::fabs(analytic[i]), 1e-12), kMinStep, kMaxStep));
    float saved = w[i];
    w[i] = saved + step;
    double up = loss();
    w[i] = saved - step;
    double down = loss();
    w[i] = saved;
    double numeric = (up - down) / (2.0 * step);
    diff += (numeric - analytic[i]) * (numeric - analytic[i]);
    if (std::getenv("DLBENCH_DEBUG_GRAD"))
      std::printf("  %ld: numeric %.5f analytic %.5f\n", static_cast<long>(i), numeric,
                  analytic[i]);
    norm += std::max(numeric * numeric, analytic[i] * analytic[i]);
  }
  double rel = std::sqrt(diff / norm);
  std::printf("%s: relative gradient error %.2e over %d probes\n", model, rel, kProbes);
  EXPECT_LT(rel, 5e-2);
}

TEST(NetworkGradientTest, Vgg16) {
  expect_network_gradients("vgg16", 16);
}
TEST(NetworkGradientTest, ResNet50) {
  expect_network_gradients("resnet50", 16);
}

}  // namespace
}  // namespace dlbench
