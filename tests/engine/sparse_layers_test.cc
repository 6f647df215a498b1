// The layers of the sparse-ids contract on the CPU: Embedding (one table shared by two lookups,
// repeated ids), SplitColumns (a node with two outputs) and the SigmoidBinaryCrossEntropy loss,
// each inside a small graph: what the store, the planner and a step make of them. Their
// gradients against central differences are op harness cases (tests/ops/cases/layer_cases.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/dist/communicator.h"
#include "engine/nn/executor.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/split_columns.h"
#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/planner.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/finite_differences.h"

namespace dlbench::nn {
namespace {

constexpr std::int64_t kRows = 4, kVocab = 5, kDim = 3, kClasses = 3, kFeatures = 6;
// Row 4 is read by no id; rows 0 and 2 more than once, across the two lookups too.
const std::vector<std::int32_t> kLeft = {0, 2, 2, 1}, kRight = {2, 3, 0, 2};

std::unique_ptr<Linear> linear(std::int64_t k, std::int64_t n) {
  backend::MatmulParams p;
  p.m = kRows, p.k = k, p.n = n, p.bias = true;
  return std::make_unique<Linear>(p, 0.5f);
}

data::InputSpec ids(const char* name) {
  return {name, {kRows}, DType::kI32, data::uniform_int(0, kVocab), "ids"};
}
data::InputSpec labels() {
  return {"labels", {kRows}, DType::kI32, data::uniform_int(0, kClasses), "class labels"};
}

// left, right -> one table -> sum -> fc -> cross-entropy.
Graph tied_lookups() {
  Graph g;
  const ValueId left = g.add_input(ids("left"));
  const ValueId right = g.add_input(ids("right"));
  const ValueId label = g.add_input(labels());
  ParamDecl decl{"table", {kVocab, kDim}, Init::kNormal, 1, ParamGroup::kSparseRows, 0.5f};
  const ParamId table = g.add_parameter("table", decl);
  auto lookup = [&](const char* name, ValueId x) {
    return g.add(
        name, std::make_unique<Embedding>(EmbeddingShape{kRows, kVocab, kDim}, DType::kF32, 0.5f),
        {x}, {table});
  };
  const ValueId h = g.add("sum", std::make_unique<Add>(),
                          {lookup("embed_left", left), lookup("embed_right", right)});
  const ValueId logits = g.add("fc", linear(kDim, kClasses), {h});
  g.add("loss", std::make_unique<SoftmaxCrossEntropy>(), {logits, label});
  g.mark_output(logits);
  return g;
}

void write_ids(const Tensor& t, const std::vector<std::int32_t>& values) {
  std::copy(values.begin(), values.end(), t.data_as<std::int32_t>());
}

TrainerConfig gradients_only() {
  TrainerConfig config;
  config.optimizer.learning_rate = 0.0f;  // a step computes gradients and moves nothing
  config.optimizer.momentum = 0.0f;
  return config;
}

TEST(EmbeddingTest, ASharedTableWithRepeatedIdsHasGradientsOnlyInTheRowsRead) {
  auto be = backend::make_backend(Device::cpu());
  Trainer trainer(tied_lookups(), *be, gradients_only());
  data::SyntheticSource(trainer.graph().input_specs(), 11).fill(*be, trainer.inputs());
  write_ids(trainer.inputs()[0], kLeft);
  write_ids(trainer.inputs()[1], kRight);
  const std::vector<double> analytic = test::step_gradients(trainer);
  // The table's slice: the row no id reads has no gradient at all.
  for (const ParameterSlice& s : trainer.parameter_slices()) {
    if (s.name != "table") continue;
    EXPECT_EQ(s.group, ParamGroup::kSparseRows);
    EXPECT_EQ(s.count, kVocab * kDim);
    for (std::int64_t j = 0; j < kDim; ++j) {
      EXPECT_EQ(analytic[s.offset + 4 * kDim + j], 0.0) << "row 4 is read by no id";
      EXPECT_NE(analytic[s.offset + 2 * kDim + j], 0.0) << "row 2 is read four times";
    }
  }
}

TEST(EmbeddingTest, TheStoreKeepsATouchedMaskThatEachStepRewrites) {
  auto be = backend::make_backend(Device::cpu());
  Graph graph = tied_lookups();
  // One table, read by both lookups: the later one (right, whose backward runs first)
  // overwrites its gradient and mask, the earlier one adds.
  const ActivationPlan plan = plan_activations(graph, Mode::kTrain);
  EXPECT_EQ(graph.params()[0].users, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(plan.param_grad_modes[1], std::vector<GradMode>{GradMode::kOverwrite});
  EXPECT_EQ(plan.param_grad_modes[0], std::vector<GradMode>{GradMode::kAccumulate});

  ParameterStore store(graph, *be, Mode::kTrain, DType::kF32, 5);
  ASSERT_EQ(store.sparse_tables().size(), 1u);
  const SparseTable& table = store.sparse_tables()[0];
  EXPECT_EQ(table.rows, kVocab);
  EXPECT_EQ(table.columns, kDim);
  EXPECT_EQ(table.range.size(), kVocab * kDim);
  EXPECT_EQ(store.range(ParamGroup::kSparseRows).size(), kVocab * kDim);
  // Both users see the one mask; other parameters have none.
  EXPECT_EQ(store.rows(0)[0].data(), table.touched.data());
  EXPECT_EQ(store.rows(1)[0].data(), table.touched.data());
  EXPECT_FALSE(store.rows(3)[0].defined());

  Executor executor(std::move(graph), *be, store, Mode::kTrain, Precision::kFp32);
  std::vector<std::int32_t> left = kLeft, right = kRight, label = {0, 1, 2, 0};
  executor.bind_input(0, Tensor(left.data(), {kRows}, DType::kI32, Device::cpu()));
  executor.bind_input(1, Tensor(right.data(), {kRows}, DType::kI32, Device::cpu()));
  executor.bind_input(2, Tensor(label.data(), {kRows}, DType::kI32, Device::cpu()));
  auto step = [&] {
    executor.forward();
    executor.run_losses(1.0f);
    executor.backward({});
    const std::int32_t* mask = table.touched.data_as<std::int32_t>();
    return std::vector<std::int32_t>(mask, mask + kVocab);
  };
  EXPECT_EQ(step(), (std::vector<std::int32_t>{1, 1, 1, 1, 0}));
  // A step that reads other rows clears the old marks (overwrite), keeps both lookups' marks.
  left = {4, 4, 1, 1};
  right = {1, 4, 4, 1};
  EXPECT_EQ(step(), (std::vector<std::int32_t>{0, 1, 0, 0, 1}));
}

// Rank 0 of two, the other replica a copy of this one: a sum doubles what it is given. Keeps
// the i32 tensors it summed (the touched masks).
class MirroredReplica final : public dist::Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string name() const override { return "mirrored"; }
  void allreduce_sum(const Tensor& t) override {
    if (t.dtype() == DType::kI32) {
      std::int32_t* p = t.data_as<std::int32_t>();
      for (std::int64_t i = 0; i < t.numel(); ++i) p[i] *= 2;
      masks.emplace_back(p, p + t.numel());
      return;
    }
    float* p = t.data_as<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] *= 2;
  }
  void wait() override {}
  void broadcast(const Tensor&, int) override {}
  std::vector<double> allgather(double v) override { return {v, v}; }
  std::vector<std::uint64_t> allgather(std::uint64_t v) override { return {v, v}; }
  void abort() noexcept override {}
  std::vector<std::vector<std::int32_t>> masks;
};

TEST(EmbeddingTest, DataParallelStepsSumTheTouchedMasks) {
  auto be = backend::make_backend(Device::cpu());
  MirroredReplica replica;
  TrainerConfig config = gradients_only();
  config.communicator = &replica;
  Trainer trainer(tied_lookups(), *be, config);
  data::SyntheticSource(trainer.graph().input_specs(), 11).fill(*be, trainer.inputs());
  write_ids(trainer.inputs()[0], kLeft);
  write_ids(trainer.inputs()[1], kRight);
  trainer.train_step();
  // Once per step, after the gradients: a row is touched where either replica touched it.
  ASSERT_EQ(replica.masks.size(), 1u);
  EXPECT_EQ(replica.masks[0], (std::vector<std::int32_t>{2, 2, 2, 2, 0}));
}

TEST(EmbeddingTest, IdsMustBeI32OfTheLayersLength) {
  Graph g;
  const ValueId x = g.add_input({"x", {kRows}, DType::kF32, data::normal(0, 1), "not ids"});
  const ValueId short_ids =
      g.add_input({"short", {kRows - 1}, DType::kI32, data::uniform_int(0, kVocab), "too few ids"});
  for (ValueId v : {x, short_ids})
    EXPECT_THROW(
        g.add("embed",
              std::make_unique<Embedding>(EmbeddingShape{kRows, kVocab, kDim}, DType::kF32, 0.5f),
              {v}),
        Error);
}

// x -> fc0 -> split (2 | 4 columns) -> fc1 -> cross-entropy, and fc2 -> sigmoid BCE.
struct SplitHeads {
  Graph graph;
  ValueId h, first, second, match_logit;
};

SplitHeads split_heads() {
  SplitHeads t;
  Graph& g = t.graph;
  const ValueId x =
      g.add_input({"x", {kRows, kFeatures}, DType::kF32, data::normal(0, 1), "features"});
  const ValueId label = g.add_input(labels());
  const ValueId match =
      g.add_input({"match", {kRows, 1}, DType::kF32, data::uniform_int(0, 2), "targets"});
  t.h = g.add("fc0", linear(kFeatures, kFeatures), {x});
  const std::vector<ValueId> halves =
      g.add_multi("split", std::make_unique<SplitColumns>(std::vector<std::int64_t>{2, 4}), {t.h});
  t.first = halves[0], t.second = halves[1];
  const ValueId logits = g.add("fc1", linear(2, kClasses), {t.first});
  t.match_logit = g.add("fc2", linear(4, 1), {t.second});
  g.add("class_loss", std::make_unique<SoftmaxCrossEntropy>(), {logits, label});
  g.add("match_loss", std::make_unique<SigmoidBinaryCrossEntropy>(), {t.match_logit, match});
  // Marked: alive to the end of the forward pass, so the tests can read them after one.
  for (ValueId v : {logits, t.match_logit, t.h, t.first, t.second}) g.mark_output(v);
  return t;
}

TEST(SplitColumnsTest, TwoBlocksAreTheColumnsOfOneValue) {
  auto be = backend::make_backend(Device::cpu());
  SplitHeads t = split_heads();
  EXPECT_EQ(t.graph.value(t.first).shape, (Shape{kRows, 2}));
  EXPECT_EQ(t.graph.value(t.second).shape, (Shape{kRows, 4}));
  EXPECT_EQ(t.graph.value(t.second).name, "split:1");
  // The split writes h's gradient once, by overwrite, from both blocks.
  const ActivationPlan plan = plan_activations(t.graph, Mode::kTrain);
  EXPECT_EQ(plan.input_grad_modes[1], std::vector<GradMode>{GradMode::kOverwrite});

  Trainer trainer(std::move(t.graph), *be, gradients_only());
  data::SyntheticSource(trainer.graph().input_specs(), 12).fill(*be, trainer.inputs());
  // The blocks are h's columns, bit for bit (read after a forward pass: backward reuses them).
  trainer.infer_step();
  const float* h = trainer.value(t.h).data_as<float>();
  const float* first = trainer.value(t.first).data_as<float>();
  const float* second = trainer.value(t.second).data_as<float>();
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t c = 0; c < kFeatures; ++c)
      EXPECT_EQ(h[r * kFeatures + c], c < 2 ? first[r * 2 + c] : second[r * 4 + c - 2]);
}

TEST(SplitColumnsTest, WidthsMustCoverTheColumns) {
  Graph g;
  const ValueId x =
      g.add_input({"x", {kRows, kFeatures}, DType::kF32, data::normal(0, 1), "features"});
  EXPECT_THROW(
      g.add_multi("split", std::make_unique<SplitColumns>(std::vector<std::int64_t>{2, 3}), {x}),
      Error);
  EXPECT_THROW(
      g.add_multi("split", std::make_unique<SplitColumns>(std::vector<std::int64_t>{0, 6}), {x}),
      Error);
}

TEST(SigmoidBinaryCrossEntropyTest, TheLossIsTheMeanOfTheStableFormula) {
  auto be = backend::make_backend(Device::cpu());
  SplitHeads t = split_heads();
  const ValueId match_loss = t.graph.nodes().back().output();
  Trainer trainer(std::move(t.graph), *be, gradients_only());
  data::SyntheticSource(trainer.graph().input_specs(), 13).fill(*be, trainer.inputs());
  // The logits of a forward pass, then the loss of a step on the same weights and batch.
  trainer.infer_step();
  const float* logits = trainer.value(t.match_logit).data_as<float>();
  const std::vector<float> x(logits, logits + kRows);
  trainer.train_step();
  const float* target = trainer.inputs()[2].data_as<float>();
  double expected = 0;
  int ones = 0;
  for (std::int64_t i = 0; i < kRows; ++i) {
    const double xi = x[i], ti = target[i];
    ones += ti == 1.0;
    expected += std::max(xi, 0.0) - xi * ti + std::log1p(std::exp(-std::fabs(xi)));
  }
  expected /= kRows;
  EXPECT_GT(ones, 0);  // both kinds of target
  EXPECT_LT(ones, kRows);
  EXPECT_NEAR(trainer.value(match_loss).data_as<float>()[0], expected, 1e-6 * expected);
}

}  // namespace
}  // namespace dlbench::nn
