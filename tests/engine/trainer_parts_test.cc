// The parts a Trainer ties together, each on its own: the parameter store's groups and views,
// SGD with momentum against a reference, fp16 dynamic loss scaling, and loading trained weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/additive_attention.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/loss_scaler.h"
#include "engine/nn/optim/sgd_momentum.h"
#include "engine/nn/parameter_store.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

nn::Graph tiny_resnet() {
  const models::ModelSpec& info = models::find_model("resnet50");
  models::ModelConfig mc;
  mc.batch = 2;
  mc.size = 32;
  mc.width_divisor = 8;
  return info.build(models::resolve(info, mc));
}

// x [2, 4] -> Linear(4 -> 3, bias): a decayed weight and a not-decayed bias.
nn::Graph linear_graph() {
  nn::Graph g;
  const nn::ValueId x = g.add_input({"x", {2, 4}, DType::kF32, data::normal(0, 1), "features"});
  backend::MatmulParams p;
  p.m = 2, p.k = 4, p.n = 3, p.bias = true;
  g.mark_output(g.add("fc", std::make_unique<nn::Linear>(p), {x}));
  return g;
}

std::vector<float> host(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
}

TEST(ParameterStoreTest, GroupsAreContiguousRangesInGroupOrder) {
  auto be = backend::make_backend(Device::cpu());
  const nn::Graph graph = tiny_resnet();
  nn::ParameterStore store(graph, *be, Mode::kTrain, DType::kF32, 42);
  const nn::ParamRange decayed = store.range(nn::ParamGroup::kDecayed);
  const nn::ParamRange plain = store.range(nn::ParamGroup::kNotDecayed);
  const nn::ParamRange kept = store.range(nn::ParamGroup::kKeptF32);
  EXPECT_EQ(decayed.begin, 0);
  EXPECT_EQ(plain.begin, decayed.end);
  EXPECT_EQ(kept.begin, plain.end);
  EXPECT_EQ(kept.end, store.count());
  EXPECT_GT(decayed.size(), 0);  // convolution and fc weights
  EXPECT_GT(plain.size(), 0);    // the fc bias
  EXPECT_GT(kept.size(), 0);     // batch norm

  // Every slice lies in its group's range, and together they tile [0, count) exactly.
  std::vector<nn::ParameterSlice> slices = store.slices();
  for (const nn::ParameterSlice& s : slices) {
    const nn::ParamRange r = store.range(s.group);
    EXPECT_GE(s.offset, r.begin) << s.name;
    EXPECT_LE(s.offset + s.count, r.end) << s.name;
  }
  std::sort(slices.begin(), slices.end(),
            [](const auto& a, const auto& b) { return a.offset < b.offset; });
  std::int64_t next = 0;
  for (const nn::ParameterSlice& s : slices) {
    EXPECT_EQ(s.offset, next) << s.name;
    next = s.offset + s.count;
  }
  EXPECT_EQ(next, store.count());
  // Slices are listed in node order: the stem convolution's weight first, though batch
  // norm's parameters of the same layers sit at the end of the buffers.
  EXPECT_EQ(store.slices().front().group, nn::ParamGroup::kDecayed);
  EXPECT_EQ(store.slices().front().offset, 0);
}

TEST(ParameterStoreTest, WeightsFollowTheSeedAndInferenceHasNoGradients) {
  auto be = backend::make_backend(Device::cpu());
  const nn::Graph graph = tiny_resnet();
  nn::ParameterStore a(graph, *be, Mode::kTrain, DType::kF32, 42);
  nn::ParameterStore b(graph, *be, Mode::kInfer, DType::kF32, 42);
  nn::ParameterStore c(graph, *be, Mode::kTrain, DType::kF32, 43);
  EXPECT_EQ(host(a.flat_weights()), host(b.flat_weights()));
  EXPECT_NE(host(a.flat_weights()), host(c.flat_weights()));
  EXPECT_GT(a.grad_bytes(), 0u);
  EXPECT_EQ(b.grad_bytes(), 0u);
  EXPECT_FALSE(b.grads(0).front().defined());
  // The gradients start at zero, so a first accumulation adds to nothing.
  for (float g : host(a.flat_grads())) ASSERT_EQ(g, 0.0f);
}

// GNMT's attention starts v from U(-0.1, 0.1) and g from 1 / sqrt(width) (ParamDecl's
// kUniform and kConstant).
TEST(ParameterStoreTest, UniformAndConstantInitsGiveTheirValues) {
  auto be = backend::make_backend(Device::cpu());
  backend::AdditiveAttentionParams p;
  p.batch = 2, p.queries = 3, p.keys = 4, p.width = 400, p.value_width = 3;
  nn::Graph g;
  const auto in = [&](const char* name, const Shape& shape) {
    return g.add_input({name, shape, DType::kF32, data::normal(0, 1), "features"});
  };
  const nn::ValueId q = in("q", p.query_shape()), k = in("k", p.key_shape()),
                    values = in("values", p.value_shape());
  const nn::ValueId lengths =
      g.add_input({"lengths", {p.batch}, DType::kI32, data::uniform_int(1, 5), "lengths"});
  g.mark_output(
      g.add("attention", std::make_unique<nn::AdditiveAttention>(p), {q, k, values, lengths}));
  nn::ParameterStore store(g, *be, Mode::kTrain, DType::kF32, 42);
  const std::vector<float> w = host(store.flat_weights());
  ASSERT_EQ(w.size(), 401u);
  const nn::ParamRange decayed = store.range(nn::ParamGroup::kDecayed);
  ASSERT_EQ(decayed.size(), 400);  // v
  float lo = 1, hi = -1;
  for (std::int64_t i = decayed.begin; i < decayed.end; ++i)
    lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
  EXPECT_GE(lo, -0.1f);
  EXPECT_LE(hi, 0.1f);
  EXPECT_LT(lo, -0.09f);  // 400 draws reach both ends' last tenth
  EXPECT_GT(hi, 0.09f);
  EXPECT_EQ(store.range(nn::ParamGroup::kKeptF32).size(), 1);  // g, f32 in every precision
  EXPECT_EQ(w[400], 0.05f);                                    // g = 1 / sqrt(400)
}

TEST(SgdMomentumTest, DecaysOnlyTheDecayedRangeAsTheReference) {
  auto be = backend::make_backend(Device::cpu());
  const nn::Graph graph = linear_graph();
  nn::ParameterStore store(graph, *be, Mode::kTrain, DType::kF32, 7);
  ASSERT_EQ(store.range(nn::ParamGroup::kDecayed).size(), 12);
  ASSERT_EQ(store.range(nn::ParamGroup::kNotDecayed).size(), 3);
  nn::OptimizerConfig config;
  config.learning_rate = 0.1f;
  config.momentum = 0.9f;
  config.weight_decay = 0.01f;
  nn::SgdMomentum sgd(config, *be, store);
  EXPECT_EQ(sgd.state_bytes(), 15 * sizeof(float));

  const std::int64_t n = store.count();
  std::vector<float> w = host(store.flat_weights()), v(static_cast<std::size_t>(n), 0.0f);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int step = 0; step < 3; ++step) {
    float* g = store.flat_grads().data_as<float>();
    for (std::int64_t i = 0; i < n; ++i) g[i] = normal(rng);
    const float scale = 0.5f;
    for (std::int64_t i = 0; i < n; ++i) {
      const float wd = i < 12 ? config.weight_decay : 0.0f;
      const float gi = scale * g[i] + wd * w[i];
      v[i] = config.momentum * v[i] + gi;
      w[i] -= config.learning_rate * v[i];
    }
    sgd.update(store, scale);
    const std::vector<float> got = host(store.flat_weights());
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(got[i], w[i]) << "step " << step << " i " << i;
  }
}

// The scale the losses read on the device follows the host's at every change.
float device_scale(const nn::LossScaler& scaler) {
  const backend::LossScale s = scaler.loss_scale();
  EXPECT_TRUE(s.on_device.defined());
  return s.on_device.defined() ? *s.on_device.data_as<float>() : s.value;
}

TEST(LossScalerTest, SkipsNonFiniteStepsHalvingAndGrowsAfterCleanOnes) {
  auto be = backend::make_backend(Device::cpu());
  std::vector<float> grads = {1.0f, -2.0f, 3.0f, 0.5f};
  const Tensor t(grads.data(), {4}, DType::kF32, Device::cpu());
  nn::LossScaler scaler({true, 8.0f, 3}, *be);
  EXPECT_EQ(scaler.scale(), 8.0f);
  EXPECT_EQ(device_scale(scaler), 8.0f);
  EXPECT_TRUE(scaler.accept(*be, t));
  EXPECT_TRUE(scaler.accept(*be, t));
  EXPECT_EQ(scaler.scale(), 8.0f);
  EXPECT_TRUE(scaler.accept(*be, t));  // the third clean step doubles it
  EXPECT_EQ(scaler.scale(), 16.0f);
  EXPECT_EQ(device_scale(scaler), 16.0f);
  grads[2] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(scaler.accept(*be, t));
  EXPECT_EQ(scaler.scale(), 8.0f);
  EXPECT_EQ(device_scale(scaler), 8.0f);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  grads[2] = std::nanf("");
  EXPECT_TRUE(!scaler.accept(*be, t) && scaler.scale() == 4.0f && scaler.skipped_steps() == 2);
  EXPECT_EQ(device_scale(scaler), 4.0f);
  // The count of clean steps starts again after a skip.
  grads[2] = 1.0f;
  EXPECT_TRUE(scaler.accept(*be, t));
  EXPECT_TRUE(scaler.accept(*be, t));
  EXPECT_EQ(scaler.scale(), 4.0f);

  nn::LossScaler floor({true, 1.0f, 3}, *be);
  grads[0] = std::nanf("");
  EXPECT_FALSE(floor.accept(*be, t));
  EXPECT_EQ(floor.scale(), 1.0f);  // never below 1
  EXPECT_EQ(device_scale(floor), 1.0f);

  nn::LossScaler off({false, 8.0f, 3}, *be);  // bf16, tf32, fp32: no scaling, nothing skipped
  EXPECT_EQ(off.scale(), 1.0f);
  EXPECT_FALSE(off.loss_scale().on_device.defined());  // the losses take the number 1
  EXPECT_EQ(off.loss_scale().value, 1.0f);
  EXPECT_TRUE(off.accept(*be, t));
  EXPECT_EQ(off.skipped_steps(), 0);
}

}  // namespace
}  // namespace dlbench

namespace dlbench {
namespace {

// Weights trained at one batch, loaded into an inference trainer of the same model at another
// (what ranking evaluation does): the same weights, and they, not the initial ones, score.
TEST(TrainerLoadWeightsTest, AnInferenceTrainerScoresWithTrainedWeights) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& ncf = models::find_model("ncf");
  auto build = [&](Mode mode, std::int64_t batch) {
    models::ModelConfig mc;
    mc.batch = batch;
    mc.mode = mode;
    return ncf.build(models::resolve(ncf, mc));
  };
  nn::TrainerConfig train_config;
  train_config.optimizer = ncf.default_optimizer;
  train_config.optimizer.learning_rate = 0.01f;
  nn::Trainer trained(build(Mode::kTrain, 20), *be, train_config);
  data::SyntheticSource source(trained.graph().input_specs(), 3);
  for (int step = 0; step < 3; ++step) {
    source.fill(*be, trained.inputs());
    trained.train_step();
  }
  nn::TrainerConfig infer_config;
  infer_config.mode = Mode::kInfer;
  nn::Trainer fresh(build(Mode::kInfer, 4), *be, infer_config);
  nn::Trainer loaded(build(Mode::kInfer, 4), *be, infer_config);
  EXPECT_THROW(
      loaded.load_weights(Tensor(trained.flat_weights().data(), {10}, DType::kF32, Device::cpu())),
      Error);  // another model's count
  loaded.load_weights(trained.flat_weights());
  EXPECT_EQ(host(loaded.flat_weights()), host(trained.flat_weights()));
  EXPECT_NE(host(fresh.flat_weights()), host(trained.flat_weights()));
  data::SyntheticSource pairs(fresh.graph().input_specs(), 9);
  for (nn::Trainer* net : {&fresh, &loaded}) {
    pairs.fill(*be, net->inputs());
    net->infer_step();
  }
  EXPECT_NE(host(loaded.logits()), host(fresh.logits()));
  EXPECT_THROW(loaded.load_weights(trained.flat_weights()), Error);  // after a step
}

// Batch norm's running statistics travel with load_state (what held-out Dice needs): a U-Net
// trained three steps and loaded into inference trainers segments differently with its running
// statistics than with the initial ones, a copy of a copy scores the same bit for bit, and
// another model's state or a late call is refused.
TEST(TrainerLoadStateTest, RunningStatisticsTravelWithLoadState) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& unet = models::find_model("unet");
  auto build = [&](const models::ModelSpec& spec, Mode mode) {
    models::ModelConfig mc;
    mc.batch = 2;
    mc.mode = mode;
    mc.size = 32;
    mc.width_divisor = 16;
    return spec.build(models::resolve(spec, mc));
  };
  // Fusion on, as runs have it: training fuses "bn1+relu1", inference "conv1+bn1+relu1".
  nn::TrainerConfig train_config;
  train_config.optimizer.learning_rate = 0.01f;
  train_config.fusion = nn::Fusion::kOn;
  nn::Trainer trained(build(unet, Mode::kTrain), *be, train_config);
  data::SyntheticSource source(trained.graph().input_specs(), 5);
  for (int step = 0; step < 3; ++step) {
    source.fill(*be, trained.inputs());
    trained.train_step();
  }
  nn::TrainerConfig infer_config;
  infer_config.mode = Mode::kInfer;
  infer_config.fusion = nn::Fusion::kOn;
  nn::Trainer weights_only(build(unet, Mode::kInfer), *be, infer_config);
  nn::Trainer with_state(build(unet, Mode::kInfer), *be, infer_config);
  nn::Trainer copy_of_copy(build(unet, Mode::kInfer), *be, infer_config);
  for (nn::Trainer* net : {&weights_only, &with_state, &copy_of_copy})
    net->load_weights(trained.flat_weights());
  with_state.load_state(trained);
  copy_of_copy.load_state(with_state);
  nn::Trainer resnet(build(models::find_model("resnet50"), Mode::kInfer), *be, infer_config);
  EXPECT_THROW(resnet.load_state(trained), Error);  // no layer of the same name and size
  data::SyntheticSource scenes(with_state.graph().input_specs(), 8);
  for (nn::Trainer* net : {&weights_only, &with_state, &copy_of_copy}) {
    scenes.fill(*be, net->inputs());
    net->infer_step();
  }
  EXPECT_NE(trained.passes().rewrites, with_state.passes().rewrites);  // fused differently
  EXPECT_NE(host(with_state.logits()), host(weights_only.logits()));
  EXPECT_EQ(host(copy_of_copy.logits()), host(with_state.logits()));
  EXPECT_THROW(with_state.load_state(trained), Error);  // after a step
}

}  // namespace
}  // namespace dlbench
