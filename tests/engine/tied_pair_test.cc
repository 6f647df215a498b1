// The tied-pair model (tests/engine/models/tied_pair_model.cc) end to end on the CPU: the general
// step contract's two i32 inputs, one table read by two Embedding layers, a node with two
// outputs, two losses summed, AdamW on the dense groups and lazy Adam on the table. Every
// parameter's gradient against central differences; rows no id reads keep a zero gradient and
// their bits through Adam steps; Adam drives both losses down; what the planner schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/planner.h"
#include "engine/nn/trainer.h"
#include "tests/engine/models/tied_pair_model.h"
#include "tests/engine/support/finite_differences.h"

namespace dlbench {
namespace {

namespace tp = models::tied_pair;

// Every id in rows 0-3, some several times (in one lookup and across both): rows 4 and 5 are
// read by no id.
const std::vector<std::int32_t> kLeft = {0, 1, 2, 3, 0, 1, 2, 0};
const std::vector<std::int32_t> kRight = {3, 3, 1, 0, 2, 2, 0, 1};
constexpr std::int64_t kFirstUnreadRow = 4;
constexpr double kGradientTolerance = 1e-2;  // per probe, relative (floor 1e-2)

const models::ModelSpec& spec() {
  return models::find_model(tp::kName);
}

nn::Graph build() {
  models::ModelConfig mc;
  mc.batch = tp::kBatch;
  return spec().build(models::resolve(spec(), mc));
}

nn::TrainerConfig trainer_config(float learning_rate) {
  nn::TrainerConfig c;
  c.optimizer = spec().default_optimizer;
  c.optimizer.learning_rate = learning_rate;
  return c;
}

// The synthetic batch (labels and match targets), with the ids above.
void fill_batch(backend::Backend& be, nn::Trainer& trainer) {
  data::SyntheticSource(trainer.graph().input_specs(), 17).fill(be, trainer.inputs());
  std::memcpy(trainer.inputs()[0].data(), kLeft.data(), kLeft.size() * sizeof(std::int32_t));
  std::memcpy(trainer.inputs()[1].data(), kRight.data(), kRight.size() * sizeof(std::int32_t));
}

const nn::ParameterSlice& table_slice(const nn::Trainer& trainer) {
  for (const nn::ParameterSlice& s : trainer.parameter_slices())
    if (s.name == "table") return s;
  throw Error(ErrorKind::kInternal, "no table");
}

std::size_t node(const nn::Graph& g, const std::string& name) {
  for (std::size_t n = 0; n < g.nodes().size(); ++n)
    if (g.nodes()[n].name == name) return n;
  throw Error(ErrorKind::kInternal, "no node " + name);
}

float loss_of(const nn::Trainer& trainer, const char* loss_node) {
  const nn::Graph& g = trainer.graph();
  return trainer.value(g.nodes()[node(g, loss_node)].output()).data_as<float>()[0];
}

TEST(TiedPairTest, TheSpecDescribesPairsWithTwoIdInputs) {
  const nn::Graph g = build();
  ASSERT_EQ(g.inputs().size(), 4u);
  EXPECT_EQ(g.value(g.input("left")).dtype, DType::kI32);
  EXPECT_EQ(g.value(g.input("right")).dtype, DType::kI32);
  EXPECT_EQ(g.value(g.input("match")).dtype, DType::kF32);
  EXPECT_EQ(spec().unit, models::SampleUnit::kPairs);
  EXPECT_EQ(spec().default_optimizer.kind, nn::OptimizerConfig::Kind::kAdamW);
  EXPECT_EQ(spec().default_optimizer.sparse_kind, nn::OptimizerConfig::Kind::kSparseAdam);
  // One table of V x D counted once, and two heads of D/2 inputs each.
  EXPECT_EQ(nn::parameter_count(g),
            tp::kVocab * tp::kDim + (tp::kDim / 2 + 1) * tp::kClasses + (tp::kDim / 2 + 1));
  EXPECT_EQ(g.params()[0].users,
            (std::vector<std::size_t>{node(g, tp::kLeftLookup), node(g, tp::kRightLookup)}));
}

TEST(TiedPairTest, ThePlannerOverwritesThenAccumulatesTheTable) {
  const nn::Graph g = build();
  const nn::ActivationPlan plan = nn::plan_activations(g, Mode::kTrain);
  using backend::GradMode;
  // Backward runs last to first: the right lookup writes the table's gradient (and its touched
  // mask) first, the left one adds to it.
  EXPECT_EQ(plan.param_grad_modes[node(g, tp::kRightLookup)],
            std::vector<GradMode>{GradMode::kOverwrite});
  EXPECT_EQ(plan.param_grad_modes[node(g, tp::kLeftLookup)],
            std::vector<GradMode>{GradMode::kAccumulate});
  // h has one reader, the split: its two blocks overwrite h's gradient once between them; the
  // sum passes it to both lookups, each overwritten once.
  EXPECT_EQ(plan.input_grad_modes[node(g, tp::kSplit)],
            std::vector<GradMode>{GradMode::kOverwrite});
  EXPECT_EQ(plan.input_grad_modes[node(g, tp::kSum)],
            (std::vector<GradMode>{GradMode::kOverwrite, GradMode::kOverwrite}));
  // The ids are data: no gradient buffer.
  EXPECT_EQ(plan.grad_offset[g.input("left")], nn::kNoBuffer);
  EXPECT_EQ(plan.grad_offset[g.input("right")], nn::kNoBuffer);
  for (const char* loss : {tp::kClassLoss, tp::kMatchLoss})
    EXPECT_EQ(plan.input_grad_modes[node(g, loss)][0], GradMode::kOverwrite) << loss;
}

TEST(TiedPairTest, EveryParameterMatchesFiniteDifferences) {
  auto be = backend::make_backend(Device::cpu());
  nn::Trainer trainer(build(), *be, trainer_config(0.0f));  // lr 0: steps move nothing
  fill_batch(*be, trainer);
  const std::vector<double> analytic = test::step_gradients(trainer);
  std::vector<std::int64_t> every;
  for (std::int64_t i = 0; i < trainer.parameter_count(); ++i) every.push_back(i);
  const std::vector<test::GradientProbe> probes =
      test::probe_gradients(trainer, analytic, every, {1e-4, 1e-4, 1e-2});
  for (const test::GradientProbe& p : probes)
    EXPECT_NEAR(p.numeric, p.analytic, kGradientTolerance * std::max(1e-2, std::fabs(p.numeric)))
        << "parameter " << p.index;
  std::printf("%zu parameters probed, relative error %.2e\n", probes.size(),
              test::relative_error(probes));
  // The loss is the sum of the two heads' losses.
  EXPECT_EQ(trainer.loss(), loss_of(trainer, tp::kClassLoss) + loss_of(trainer, tp::kMatchLoss));
  const nn::ParameterSlice& table = table_slice(trainer);
  for (std::int64_t i = kFirstUnreadRow * tp::kDim; i < table.count; ++i)
    EXPECT_EQ(analytic[table.offset + i], 0.0) << "table element " << i;
}

TEST(TiedPairTest, RowsNoIdReadsKeepTheirBitsThroughAdamSteps) {
  auto be = backend::make_backend(Device::cpu());
  nn::Trainer trainer(build(), *be, trainer_config(spec().default_optimizer.learning_rate));
  fill_batch(*be, trainer);
  const nn::ParameterSlice& table = table_slice(trainer);
  const float* w = trainer.flat_weights().data_as<float>();
  const std::vector<float> before(w, w + trainer.parameter_count());
  for (int step = 0; step < 4; ++step) trainer.train_step();
  for (std::int64_t i = 0; i < table.count; ++i) {
    const std::int64_t at = table.offset + i;
    if (i >= kFirstUnreadRow * tp::kDim)
      EXPECT_EQ(w[at], before[at]) << "unread table element " << i;
    else
      EXPECT_NE(w[at], before[at]) << "read table element " << i;
  }
  // Everything outside the table moved (AdamW's step is about lr for every element).
  for (std::int64_t i = 0; i < trainer.parameter_count(); ++i) {
    if (i < table.offset || i >= table.offset + table.count) {
      EXPECT_NE(w[i], before[i]) << "parameter " << i;
    }
  }
}

TEST(TiedPairTest, AdamDrivesBothLossesDownOnAFixedBatch) {
  constexpr int kSteps = 60;
  auto be = backend::make_backend(Device::cpu());
  nn::Trainer trainer(build(), *be, trainer_config(spec().default_optimizer.learning_rate));
  fill_batch(*be, trainer);
  trainer.train_step();
  const float class0 = loss_of(trainer, tp::kClassLoss), match0 = loss_of(trainer, tp::kMatchLoss);
  for (int step = 1; step < kSteps; ++step) trainer.train_step();
  const float class1 = loss_of(trainer, tp::kClassLoss), match1 = loss_of(trainer, tp::kMatchLoss);
  std::printf("class loss %.4f -> %.4f, match loss %.4f -> %.4f after %d steps\n", class0, class1,
              match0, match1, kSteps);
  EXPECT_TRUE(std::isfinite(class1) && std::isfinite(match1));
  EXPECT_LT(class1, 0.5f * class0);
  EXPECT_LT(match1, 0.5f * match0);
}

}  // namespace
}  // namespace dlbench
