// The graph contract beyond one input and one output: typed inputs, a node with two outputs,
// two losses summed into the step's loss, and the planner's schedule for each, checked by
// finite differences through a Trainer on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/parameter_store.h"
#include "engine/nn/planner.h"
#include "engine/nn/trainer.h"

namespace dlbench::nn {
namespace {

// Test-only: out0 = x, out1 = relu(x). Its backward writes dx twice: relu's backward by the
// planner's mode (overwrite here), then the copy's gradient accumulated on top.
class Tee final : public Layer {
 public:
  const char* kind() const override { return "tee"; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> in) const override {
    return {{in[0].shape, in[0].dtype}, {in[0].shape, in[0].dtype}};
  }
  SavedForBackward saved_for_backward() const override { return {{}, {1}}; }
  void forward(const StepContext& ctx) override {
    ctx.backend.copy(ctx.inputs[0], ctx.outputs[0]);
    ctx.backend.activation_forward(backend::Activation::kRelu, ctx.inputs[0], ctx.outputs[1]);
  }
  void backward(const StepContext& ctx) override {
    if (!ctx.input_grads[0].defined()) return;
    ctx.backend.activation_backward(backend::Activation::kRelu, ctx.outputs[1], ctx.output_grads[1],
                                    ctx.input_grads[0], ctx.input_grad_modes[0]);
    ctx.backend.accumulate(ctx.output_grads[0], ctx.input_grads[0]);
  }
};

constexpr std::int64_t kRows = 4, kFeatures = 6, kHidden = 5, kClasses = 3;

data::InputSpec features(std::int64_t columns) {
  return {"x", {kRows, columns}, DType::kF32, data::normal(0, 1), "features"};
}
data::InputSpec label_spec() {
  return {"labels", {kRows}, DType::kI32, data::uniform_int(0, kClasses), "class labels"};
}

std::unique_ptr<Linear> linear(std::int64_t k, std::int64_t n) {
  backend::MatmulParams p;
  p.m = kRows, p.k = k, p.n = n, p.bias = true;
  return std::make_unique<Linear>(p, 0.5f);
}

// x -> fc0 -> tee -> (h1, h2); fc1(h1) and fc2(h2) each with a cross-entropy on the labels.
struct TwoHeads {
  Graph graph;
  ValueId x, labels, h, h1, h2, logits1, logits2;
};

// losses: which heads get their loss (1, 2 or both: 3); the weights are the same either way.
TwoHeads two_heads(int losses = 3) {
  TwoHeads t;
  Graph& g = t.graph;
  t.x = g.add_input(features(kFeatures));
  t.labels = g.add_input(label_spec());
  t.h = g.add("fc0", linear(kFeatures, kHidden), {t.x});
  const std::vector<ValueId> split = g.add_multi("tee", std::make_unique<Tee>(), {t.h});
  t.h1 = split[0], t.h2 = split[1];
  t.logits1 = g.add("fc1", linear(kHidden, kClasses), {t.h1});
  t.logits2 = g.add("fc2", linear(kHidden, kClasses), {t.h2});
  if (losses & 1) g.add("loss1", std::make_unique<SoftmaxCrossEntropy>(), {t.logits1, t.labels});
  if (losses & 2) g.add("loss2", std::make_unique<SoftmaxCrossEntropy>(), {t.logits2, t.labels});
  g.mark_output(t.logits1);
  return t;
}

TEST(GraphTest, InputsKeepTheirDtypesAndTheTeeNamesItsOutputs) {
  const TwoHeads t = two_heads();
  EXPECT_EQ(t.graph.inputs(), (std::vector<ValueId>{t.x, t.labels}));
  EXPECT_EQ(t.graph.value(t.labels).dtype, DType::kI32);
  EXPECT_EQ(t.graph.input("labels"), t.labels);
  EXPECT_EQ(t.graph.value(t.h2).name, "tee:1");
  EXPECT_EQ(t.graph.value(t.h2).output_index, 1);
  EXPECT_EQ(t.graph.layer_count(), 4u);  // fc0, tee, fc1, fc2; then the two losses
  const ValueId loss = t.graph.nodes()[4].output();
  EXPECT_EQ(t.graph.value(loss).dtype, DType::kF32);
  EXPECT_FALSE(t.graph.value(loss).needs_grad);
  EXPECT_THROW(t.graph.input("images"), Error);
}

TEST(GraphTest, LayersComeBeforeLossesAndAddTakesOneOutput) {
  TwoHeads t = two_heads();
  EXPECT_THROW(t.graph.add("late", linear(kClasses, kClasses), {t.logits1}), Error);
  Graph g;
  const ValueId x = g.add_input(features(kHidden));
  EXPECT_THROW(g.add("tee", std::make_unique<Tee>(), {x}), Error);
  EXPECT_THROW(g.add_input(features(1)), Error);  // input names are unique
}

TEST(GraphTest, PlannerSchedulesLossesAtLAndKeepsSavedOutputs) {
  const TwoHeads t = two_heads();
  const ActivationPlan plan = plan_activations(t.graph, Mode::kTrain);
  // Inputs and losses live outside the arena; every layer output is in it, with a gradient.
  EXPECT_EQ(plan.value_offset[t.x], kNoBuffer);
  EXPECT_EQ(plan.value_offset[t.labels], kNoBuffer);
  EXPECT_EQ(plan.value_offset[t.graph.nodes()[4].output()], kNoBuffer);
  for (ValueId v : {t.h, t.h1, t.h2, t.logits1, t.logits2}) {
    EXPECT_NE(plan.value_offset[v], kNoBuffer) << t.graph.value(v).name;
    EXPECT_NE(plan.grad_offset[v], kNoBuffer) << t.graph.value(v).name;
  }
  // The losses write the logits' first gradient; the tee writes h's once, by overwrite.
  EXPECT_EQ(plan.input_grad_modes[4][0], GradMode::kOverwrite);
  EXPECT_EQ(plan.input_grad_modes[5][0], GradMode::kOverwrite);
  EXPECT_EQ(plan.input_grad_modes[1][0], GradMode::kOverwrite);
  // h2 (relu's output, saved for the tee's backward at 2L - 1 = 7) and the loss-read logits
  // (alive to L = 4) must not share memory with a gradient written while they live: the two
  // buffers of h2 and dh1, both alive at time 7, are apart.
  const std::size_t bytes = kRows * kHidden * sizeof(float);
  const std::size_t a = plan.value_offset[t.h2], b = plan.grad_offset[t.h1];
  EXPECT_TRUE(a + bytes <= b || b + bytes <= a);
}

// Every parameter's gradient after one step against central differences of the step's loss.
// The trainer's inputs hold the batch (filled once).
void expect_finite_differences(Trainer& trainer) {
  auto loss = [&] {
    trainer.train_step();
    return static_cast<double>(trainer.loss());
  };
  loss();
  const std::vector<float> analytic(
      trainer.flat_grads().data_as<float>(),
      trainer.flat_grads().data_as<float>() + trainer.parameter_count());
  float* w = trainer.flat_weights().data_as<float>();
  constexpr double kStep = 1e-3;
  double worst = 0;
  for (std::int64_t i = 0; i < trainer.parameter_count(); ++i) {
    const float saved = w[i];
    w[i] = static_cast<float>(saved + kStep);
    const double up = loss();
    w[i] = static_cast<float>(saved - kStep);
    const double down = loss();
    w[i] = saved;
    const double numeric = (up - down) / (2 * kStep);
    const double error = std::fabs(numeric - analytic[i]) / std::max(1e-2, std::fabs(numeric));
    worst = std::max(worst, error);
    EXPECT_LT(error, 2e-2) << "parameter " << i << ": numeric " << numeric << " analytic "
                           << analytic[i];
  }
  std::printf("%lld parameters; worst relative error %.2e\n",
              static_cast<long long>(trainer.parameter_count()), worst);
}

TrainerConfig gradients_only() {
  TrainerConfig config;
  config.optimizer.learning_rate = 0.0f;  // a step computes gradients and moves nothing
  config.optimizer.momentum = 0.0f;
  return config;
}

TEST(GraphTest, TwoLossesThroughATeeMatchFiniteDifferences) {
  auto be = backend::make_backend(Device::cpu());
  // The step's loss is the sum of the two heads' losses, each measured alone.
  Trainer trainer(std::move(two_heads().graph), *be, gradients_only());
  data::SyntheticSource source(trainer.graph().input_specs(), 9);
  source.fill(*be, trainer.inputs());
  trainer.train_step();
  const double both = trainer.loss();
  double alone = 0;
  for (int head : {1, 2}) {
    Trainer one(std::move(two_heads(head).graph), *be, gradients_only());
    source.fill(*be, one.inputs());
    one.train_step();
    alone += one.loss();
  }
  EXPECT_NEAR(both, alone, 1e-6 * alone);
  expect_finite_differences(trainer);
}

// x -> fc_a and fc_b, one weight shared by both (each with a bias of its own), summed, then a
// classifier: the shared weight's gradient is fc_b's overwritten, then fc_a's added.
struct SharedWeight {
  Graph graph;
  ParamId weight;
};

SharedWeight shared_weight() {
  SharedWeight t;
  Graph& g = t.graph;
  const ValueId x = g.add_input(features(kFeatures));
  const ValueId labels = g.add_input(label_spec());
  t.weight = g.add_parameter(
      "shared.weight",
      {"weight", {kHidden, kFeatures}, Init::kNormal, 1, ParamGroup::kDecayed, 0.5f});
  auto bias = [&](const char* name) {
    return g.add_parameter(name,
                           {"bias", {kHidden}, Init::kNormal, 1, ParamGroup::kNotDecayed, 0.5f});
  };
  const ValueId a = g.add("fc_a", linear(kFeatures, kHidden), {x}, {t.weight, bias("fc_a.bias")});
  const ValueId b = g.add("fc_b", linear(kFeatures, kHidden), {x}, {t.weight, bias("fc_b.bias")});
  const ValueId h = g.add("sum", std::make_unique<Add>(), {a, b});
  const ValueId logits = g.add("fc", linear(kHidden, kClasses), {h});
  g.add("loss", std::make_unique<SoftmaxCrossEntropy>(), {logits, labels});
  g.mark_output(logits);
  return t;
}

TEST(GraphTest, ASharedWeightIsOneParameterWhoseUsersAddTheirGradients) {
  SharedWeight t = shared_weight();
  const Graph& g = t.graph;
  EXPECT_EQ(g.params()[t.weight].users, (std::vector<std::size_t>{0, 1}));
  // Counted once: the weight, two biases, and the classifier's weight and bias.
  EXPECT_EQ(parameter_count(g), kHidden * kFeatures + 2 * kHidden + kClasses * kHidden + kClasses);
  const ActivationPlan plan = plan_activations(g, Mode::kTrain);
  EXPECT_EQ(plan.param_grad_modes[1],
            (std::vector<GradMode>{GradMode::kOverwrite, GradMode::kOverwrite}));
  EXPECT_EQ(plan.param_grad_modes[0],
            (std::vector<GradMode>{GradMode::kAccumulate, GradMode::kOverwrite}));
  // Its gradient is final after its first user's backward: that is when its bucket may start.
  auto be = backend::make_backend(Device::cpu());
  ParameterStore store(g, *be, Mode::kTrain, DType::kF32, 1);
  const std::vector<GradientSlot> slots = store.gradient_slots();
  ASSERT_FALSE(slots.empty());
  EXPECT_EQ(slots[0].count, kHidden * kFeatures);  // the decayed group comes first
  EXPECT_EQ(slots[0].node, 0u);

  Trainer trainer(std::move(t.graph), *be, gradients_only());
  data::SyntheticSource source(trainer.graph().input_specs(), 4);
  source.fill(*be, trainer.inputs());
  expect_finite_differences(trainer);
}

TEST(GraphTest, BatchNormParametersCannotBeShared) {
  Graph g;
  const ValueId x = g.add_input(features(kHidden));
  backend::BatchNormParams p;
  p.channels = kHidden, p.rows = kRows;
  g.add("bn_a", std::make_unique<BatchNorm>(p), {x});
  const std::vector<ParamId> shared = g.nodes()[0].params;
  EXPECT_THROW(g.add("bn_b", std::make_unique<BatchNorm>(p), {x}, shared), Error);
  EXPECT_THROW(g.add("fc", linear(kHidden, kHidden), {x}, {shared[0]}), Error);  // too few
}

}  // namespace
}  // namespace dlbench::nn
