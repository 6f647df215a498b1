// The optimizers of engine/nn/optim/ on a parameter store with every group (decayed, not
// decayed, a sparse-rows table, kept in f32), against a float64 reference written from the
// published updates: Adam (Kingma & Ba 2015) with PyTorch's L2 term, AdamW (Loshchilov & Hutter
// 2019) as torch.optim.AdamW, and lazy Adam on the rows a step touched, also clipped by the
// gradients' global norm as torch.nn.utils.clip_grad_norm_ clips. Also which optimizer a config
// makes, and the models' default optimizers.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {
namespace {

using Kind = OptimizerConfig::Kind;

constexpr std::int64_t kRows = 2, kVocab = 4, kDim = 3;
constexpr int kSteps = 3;
// f32 updates against float64 over three steps.
constexpr double kRtol = 1e-5, kAtol = 1e-7;

// fc (decayed weight, not-decayed bias), an embedding table (sparse rows), batch norm (kept f32).
Graph every_group() {
  Graph g;
  const ValueId x = g.add_input({"x", {kRows, kDim}, DType::kF32, data::normal(0, 1), "x"});
  const ValueId ids =
      g.add_input({"ids", {kRows}, DType::kI32, data::uniform_int(0, kVocab), "ids"});
  backend::MatmulParams p;
  p.m = kRows, p.k = kDim, p.n = 2, p.bias = true;
  g.add("fc", std::make_unique<Linear>(p, 0.5f), {x});
  g.add("embed",
        std::make_unique<Embedding>(EmbeddingShape{kRows, kVocab, kDim}, DType::kF32, 0.5f), {ids});
  backend::BatchNormParams bn;
  bn.rows = kRows, bn.channels = kDim;
  g.add("bn", std::make_unique<BatchNorm>(bn), {x});
  return g;
}

// The published update of one element at step t, in float64.
struct Moments {
  double m = 0, v = 0;
};
double reference_step(const OptimizerConfig& c, bool decoupled, double wd, int t, double w,
                      double g, Moments& s, double grad_scale) {
  g *= grad_scale;
  if (decoupled)
    w *= 1.0 - double(c.learning_rate) * wd;
  else
    g += wd * w;
  s.m = double(c.beta1) * s.m + (1.0 - double(c.beta1)) * g;
  s.v = double(c.beta2) * s.v + (1.0 - double(c.beta2)) * g * g;
  const double m_hat = s.m / (1.0 - std::pow(double(c.beta1), t));
  const double v_hat = s.v / (1.0 - std::pow(double(c.beta2), t));
  return w - double(c.learning_rate) * m_hat / (std::sqrt(v_hat) + double(c.epsilon));
}

std::vector<float> host(const Tensor& t) {
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.numel());
}

struct AdamCase {
  const char* name;
  Kind kind;
  Kind sparse_kind;
  float max_grad_norm = 0.0f;
};

class AdamOptimizerTest : public ::testing::TestWithParam<AdamCase> {};

// Three updates of random gradients; the table's rows 1 and 3 are touched in the first step,
// row 1 alone in the others, so row 3 sits out two steps and rows 0 and 2 never move (lazily).
TEST_P(AdamOptimizerTest, EveryGroupFollowsTheReference) {
  const AdamCase& c = GetParam();
  auto be = backend::make_backend(Device::cpu());
  ParameterStore store(every_group(), *be, Mode::kTrain, DType::kF32, 3);
  OptimizerConfig config;
  config.kind = c.kind;
  config.sparse_kind = c.sparse_kind;
  config.learning_rate = 0.05f;
  config.weight_decay = 0.1f;
  config.max_grad_norm = c.max_grad_norm;
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(config, *be, store);
  const bool lazy = c.sparse_kind == Kind::kSparseAdam;
  const bool decoupled = c.kind == Kind::kAdamW;
  EXPECT_EQ(optimizer->name(),
            std::string(decoupled ? "adamw" : "adam") + (lazy ? "+sparse-adam" : ""));

  const std::int64_t n = store.count();
  const ParamRange decayed = store.range(ParamGroup::kDecayed);
  const ParamRange table = store.range(ParamGroup::kSparseRows);
  ASSERT_EQ(table.size(), kVocab * kDim);
  std::vector<double> w(n), initial(n);
  const std::vector<float> w0 = host(store.flat_weights());
  for (std::int64_t i = 0; i < n; ++i) w[i] = initial[i] = w0[i];
  std::vector<Moments> moments(n);
  std::mt19937 rng(8);
  std::normal_distribution<float> normal;
  const float grad_scale = 0.5f;
  auto* touched = store.sparse_tables()[0].touched.data_as<std::int32_t>();
  for (int t = 1; t <= kSteps; ++t) {
    float* g = store.flat_grads().data_as<float>();
    for (std::int64_t i = 0; i < n; ++i) g[i] = normal(rng);
    for (std::int64_t r = 0; r < kVocab; ++r) touched[r] = r == 1 || (t == 1 && r == 3);
    // Lazy Adam leaves the gradient of an untouched row alone; embedding_backward zeroes it.
    optimizer->update(store, grad_scale);
    // Clipping: torch.nn.utils.clip_grad_norm_ over every gradient, as scaled.
    double scale = grad_scale;
    if (c.max_grad_norm > 0) {
      double squares = 0;
      for (std::int64_t i = 0; i < n; ++i) squares += double(g[i]) * g[i];
      const double clip = c.max_grad_norm / (grad_scale * std::sqrt(squares) + 1e-6);
      ASSERT_LT(clip, 0.9) << "the case is meant to clip";
      scale *= clip;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const bool in_table = i >= table.begin && i < table.end;
      if (in_table && lazy && touched[(i - table.begin) / kDim] == 0) continue;
      // Tables and the other undecayed groups take no weight decay.
      const double wd = i < decayed.end ? double(config.weight_decay) : 0.0;
      w[i] = reference_step(config, in_table && lazy ? true : decoupled, in_table ? 0.0 : wd, t,
                            w[i], g[i], moments[i], scale);
    }
  }
  const std::vector<float> got = host(store.flat_weights());
  for (std::int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(got[i], w[i], kAtol + kRtol * std::fabs(w[i])) << "element " << i;
  for (std::int64_t r : {0, 2}) {
    for (std::int64_t j = 0; j < kDim && lazy; ++j) {
      const std::int64_t i = table.begin + r * kDim + j;
      EXPECT_EQ(got[i], static_cast<float>(initial[i])) << "untouched row " << r;
    }
  }
  // State: m and v of every parameter, and one i32 step counter per range or table: lazily,
  // decayed | not decayed | kept f32 (apart, the table between them) and the table; densely,
  // decayed | the rest.
  // Clipping adds the f32 sum of squares.
  const std::size_t counters = lazy ? 3 + 1 : 2;
  EXPECT_EQ(optimizer->state_bytes(), 2 * sizeof(float) * static_cast<std::size_t>(n) +
                                          sizeof(std::int32_t) * counters +
                                          (c.max_grad_norm > 0 ? sizeof(float) : 0));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, AdamOptimizerTest,
    ::testing::Values(AdamCase{"adamw_lazy_table", Kind::kAdamW, Kind::kSparseAdam},
                      AdamCase{"adam_lazy_table", Kind::kAdam, Kind::kSparseAdam},
                      AdamCase{"adamw_dense_table", Kind::kAdamW, Kind::kAdamW},
                      // Adam's L2 term beside the gradient gives the clip a visible effect.
                      AdamCase{"adam_clipped_lazy_table", Kind::kAdam, Kind::kSparseAdam, 1.0f},
                      AdamCase{"adamw_clipped_dense_table", Kind::kAdamW, Kind::kAdamW, 1.0f}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OptimizerRangesTest, WithoutTablesTheRangesAreSgdsTwo) {
  auto be = backend::make_backend(Device::cpu());
  Graph g;
  const ValueId x = g.add_input({"x", {kRows, kDim}, DType::kF32, data::normal(0, 1), "x"});
  backend::MatmulParams p;
  p.m = kRows, p.k = kDim, p.n = 2, p.bias = true;
  g.add("fc", std::make_unique<Linear>(p, 0.5f), {x});
  backend::BatchNormParams bn;
  bn.rows = kRows, bn.channels = kDim;
  g.add("bn", std::make_unique<BatchNorm>(bn), {x});
  ParameterStore store(g, *be, Mode::kTrain, DType::kF32, 3);
  const std::vector<DenseRange> ranges = dense_ranges(store, Tables::kUpdate);
  ASSERT_EQ(ranges.size(), 2u);  // [decayed | not decayed + kept f32], as SGD always updated
  EXPECT_TRUE(ranges[0].decayed);
  EXPECT_EQ(ranges[0].range.end, 6);
  EXPECT_FALSE(ranges[1].decayed);
  EXPECT_EQ(ranges[1].range.begin, 6);
  EXPECT_EQ(ranges[1].range.end, store.count());

  ParameterStore tables(every_group(), *be, Mode::kTrain, DType::kF32, 3);
  EXPECT_EQ(dense_ranges(tables, Tables::kUpdate).size(), 2u);  // the table joins the rest
  const std::vector<DenseRange> skip = dense_ranges(tables, Tables::kSkip);
  ASSERT_EQ(skip.size(), 3u);  // not decayed | (table) | kept f32
  EXPECT_EQ(skip[1].range.end, tables.range(ParamGroup::kSparseRows).begin);
  EXPECT_EQ(skip[2].range.begin, tables.range(ParamGroup::kSparseRows).end);
}

TEST(OptimizerConfigTest, SparseAdamIsForTablesOnly) {
  auto be = backend::make_backend(Device::cpu());
  ParameterStore store(every_group(), *be, Mode::kTrain, DType::kF32, 3);
  OptimizerConfig config;
  config.kind = Kind::kSparseAdam;
  EXPECT_THROW(make_optimizer(config, *be, store), Error);
  config.kind = Kind::kAdamW;
  config.sparse_kind = Kind::kSgdMomentum;  // neither lazy Adam nor the dense kind
  EXPECT_THROW(make_optimizer(config, *be, store), Error);
  config.kind = Kind::kSgdMomentum;  // SGD on dense groups, lazy Adam on the table
  config.sparse_kind = Kind::kSparseAdam;
  EXPECT_EQ(make_optimizer(config, *be, store)->name(), "sgd-momentum+sparse-adam");
  config.max_grad_norm = 5.0f;  // clipping is built for the Adams
  EXPECT_THROW(make_optimizer(config, *be, store), Error);
}

TEST(OptimizerConfigTest, TheImageModelsTrainWithSgdMomentum) {
  for (const char* name : {"resnet50", "vgg16"}) {
    const OptimizerConfig& c = models::find_model(name).default_optimizer;
    EXPECT_EQ(c.kind, Kind::kSgdMomentum) << name;
    EXPECT_EQ(c.momentum, 0.9f) << name;
  }
}

}  // namespace
}  // namespace dlbench::nn
