// The CPU backend's own behaviour, apart from op results (those are op harness cases): its
// oneDNN primitive cache and pooling workspace, its refusals (bad labels and ids, column
// ranges, non-f32 dtypes), the stable binary cross-entropy at extreme logits, fills, casts and
// finite checks, and Adam's defaults and fully touched sparse update.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/error.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/host_tensor.h"

namespace dlbench::ops_test {
namespace {

using backend::Activation;
using backend::AdamParams;
using backend::GradMode;

// A training loop calls the same ops with the same parameters every step: the second step
// must find every primitive in the cache.
TEST(ConvCache, RepeatedStepCreatesNoPrimitives) {
  backend::ConvParams p;
  p.n = 2, p.h = 8, p.w = 8, p.c = 4, p.k = 4, p.r = 3, p.s = 3;
  p.pad_h = p.pad_w = 1, p.bias = true;
  backend::cpu::CpuBackend be;
  HostTensor x = random_tensor(p.input_shape(), 1), w = random_tensor(p.weight_shape(), 2);
  HostTensor bias = random_tensor({p.k}, 3), dy = random_tensor(p.output_shape(), 4);
  HostTensor y(p.output_shape()), dx(p.input_shape()), dw(p.weight_shape()), db({p.k});
  auto step = [&] {
    be.conv_forward(p, x.tensor(), w.tensor(), bias.tensor(), y.tensor());
    be.conv_backward_data(p, dy.tensor(), w.tensor(), dx.tensor(), GradMode::kOverwrite);
    be.conv_backward_weights(p, x.tensor(), dy.tensor(), dw.tensor(), db.tensor(),
                             GradMode::kOverwrite);
  };
  step();
  const std::size_t after_first = be.cached_primitives();
  EXPECT_EQ(after_first, 3u);
  step();
  EXPECT_EQ(be.cached_primitives(), after_first);
}

// oneDNN's max pooling keeps where each maximum was; average pooling needs nothing.
TEST(PoolWorkspace, MaxNeedsOneAverageNone) {
  backend::PoolParams max;
  max.kind = backend::PoolKind::kMax, max.n = 2, max.h = max.w = 12, max.c = 8;
  max.window_h = max.window_w = 3, max.stride_h = max.stride_w = 2, max.pad_h = max.pad_w = 1;
  backend::PoolParams average = max;
  average.kind = backend::PoolKind::kAverage;
  backend::cpu::CpuBackend be;
  EXPECT_GT(be.pool_workspace_bytes(max), 0u);
  EXPECT_EQ(be.pool_workspace_bytes(average), 0u);
}

// --- losses: bad labels and extreme logits -------------------------------------------
TEST(SoftmaxCrossEntropyLabels, OutOfRangeLabelIsAnError) {
  backend::cpu::CpuBackend be;
  HostTensor logits = random_tensor({2, 3}, 53), loss({1}), dlogits({2, 3});
  std::vector<std::int32_t> labels = {0, 3};
  EXPECT_THROW(be.softmax_cross_entropy(logits.tensor(),
                                        Tensor(labels.data(), {2}, DType::kI32, Device::cpu()),
                                        loss.tensor(), dlogits.tensor(), 1.0f),
               Error);
}

// A class scored -inf (masked out) leaves the loss finite when nothing is smoothed: the
// smoothing term is not computed as 0 * -inf.
TEST(SoftmaxCrossEntropyLabels, MinusInfinityLogitKeepsTheLossFinite) {
  backend::cpu::CpuBackend be;
  HostTensor logits({2, 3}), loss({1}), dlogits({2, 3});
  logits.data = {0.5f, -INFINITY, 1.0f, 2.0f, 0.0f, -INFINITY};
  std::vector<std::int32_t> labels = {0, 1};
  be.softmax_cross_entropy(logits.tensor(), Tensor(labels.data(), {2}, DType::kI32, Device::cpu()),
                           loss.tensor(), dlogits.tensor(), 1.0f);
  EXPECT_TRUE(std::isfinite(loss.data[0])) << loss.data[0];
  for (float g : dlogits.data) EXPECT_TRUE(std::isfinite(g));
}

// The stable form: logits far beyond exp()'s f32 range give finite losses and exact gradients.
TEST(SigmoidBinaryCrossEntropy, ExtremeLogitsStayFinite) {
  backend::cpu::CpuBackend be;
  HostTensor logits({4, 1}), targets({4, 1}), loss({1}), dlogits({4, 1});
  logits.data = {200, -200, 200, -200};
  targets.data = {1, 0, 0, 1};
  be.sigmoid_binary_cross_entropy(logits.tensor(), targets.tensor(), loss.tensor(),
                                  dlogits.tensor(), 1.0f);
  EXPECT_FLOAT_EQ(loss.data[0], 100.0f);  // two rows right (0), two wrong by 200
  EXPECT_EQ(dlogits.data, (std::vector<float>{0.0f, 0.0f, 0.25f, -0.25f}));
}

// --- mixed-precision helpers (the CPU computes in f32: a cast is a copy) -------------------
TEST(Cast, F32ToF32CopiesExactly) {
  backend::cpu::CpuBackend be;
  HostTensor src = random_tensor({37}, 71), dst = poisoned({37});
  be.cast(src.tensor(), dst.tensor());
  EXPECT_EQ(src.data, dst.data);
}

TEST(AllFinite, FindsOneNonFiniteValueAnywhere) {
  backend::cpu::CpuBackend be;
  HostTensor t = random_tensor({1000}, 72);
  EXPECT_TRUE(be.all_finite(t.tensor()));
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{517}, std::size_t{999}}) {
      HostTensor u = t;
      u.data[at] = bad;
      EXPECT_FALSE(be.all_finite(u.tensor())) << bad << " at " << at;
    }
  }
}

// --- fills, copies, transfers ------------------------------------------------------------
TEST(Fill, NormalIsDeterministicPerSeedWithTheRightMoments) {
  backend::cpu::CpuBackend be;
  constexpr std::int64_t kCount = 100000;
  HostTensor a({kCount}), b({kCount}), c({kCount});
  be.fill_normal(a.tensor(), 0.5f, 2.0f, 7);
  be.fill_normal(b.tensor(), 0.5f, 2.0f, 7);
  be.fill_normal(c.tensor(), 0.5f, 2.0f, 8);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  double sum = 0, sq = 0;
  for (float v : a.data) sum += v, sq += static_cast<double>(v) * v;
  const double mean = sum / kCount, stddev = std::sqrt(sq / kCount - mean * mean);
  // Standard errors at 1e5 samples: 2/sqrt(1e5) ~ 0.006 for the mean, ~0.0045 for stddev.
  EXPECT_NEAR(mean, 0.5, 0.03);
  EXPECT_NEAR(stddev, 2.0, 0.03);
}

TEST(Fill, UniformIsDeterministicPerSeedAndFillsItsRangeEvenly) {
  backend::cpu::CpuBackend be;
  constexpr std::int64_t kCount = 100000;
  HostTensor a({kCount}), b({kCount}), c({kCount});
  be.fill_uniform(a.tensor(), -0.1f, 0.3f, 7);
  be.fill_uniform(b.tensor(), -0.1f, 0.3f, 7);
  be.fill_uniform(c.tensor(), -0.1f, 0.3f, 8);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  std::vector<int> bins(10, 0);
  double sum = 0;
  for (float v : a.data) {
    ASSERT_GE(v, -0.1f);
    ASSERT_LE(v, 0.3f);
    sum += v;
    ++bins[std::min(9, static_cast<int>((v + 0.1f) / 0.04f))];
  }
  // A tenth of the range each: 10,000 expected, standard deviation ~95.
  for (int count : bins) EXPECT_NEAR(count, 10000, 500);
  EXPECT_NEAR(sum / kCount, 0.1, 0.002);  // standard error 0.4 / sqrt(12e5) ~ 0.00037
  EXPECT_THROW(be.fill_uniform(a.tensor(), 0.3f, 0.3f, 1), Error);  // an empty range
  EXPECT_THROW(be.fill_uniform(a.tensor(), 0.0f, INFINITY, 1), Error);
}

TEST(Fill, UniformIntStaysInRangeAndCoversIt) {
  backend::cpu::CpuBackend be;
  std::vector<std::int32_t> v(10000);
  be.fill_uniform_int(Tensor(v.data(), {10000}, DType::kI32, Device::cpu()), -3, 7, 9);
  std::vector<int> seen(10, 0);
  for (std::int32_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++seen[x + 3];
  }
  for (int count : seen) EXPECT_GT(count, 800);  // ~1000 expected in each bin
}

TEST(Fill, ConstantCopyAndHostTransfers) {
  backend::cpu::CpuBackend be;
  HostTensor a({5, 3}), b = poisoned({5, 3});
  be.fill(a.tensor(), 2.5f);
  for (float v : a.data) EXPECT_EQ(v, 2.5f);
  HostTensor src = random_tensor({5, 3}, 71);
  be.from_host(src.data.data(), a.tensor());
  be.copy(a.tensor(), b.tensor());
  std::vector<float> back(15);
  be.to_host(b.tensor(), back.data());
  EXPECT_EQ(back, src.data);
}

TEST(DTypes, NonF32ComputeIsAClearError) {
  backend::cpu::CpuBackend be;
  std::vector<std::uint16_t> half(8);
  const Tensor x(half.data(), {8}, DType::kF16, Device::cpu());
  const Tensor y(half.data(), {8}, DType::kF16, Device::cpu());
  try {
    be.activation_forward(Activation::kRelu, x, y);
    FAIL() << "f16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f32"), std::string::npos) << e.what();
  }
}

TEST(Backend, NameSaysOneDnnVersion) {
  backend::cpu::CpuBackend be;
  EXPECT_NE(be.name().find("oneDNN"), std::string::npos) << be.name();
}

// --- embeddings and columns: refusals ----------------------------------------------------
Tensor id_tensor(std::vector<std::int32_t>& ids) {
  return Tensor(ids.data(), {static_cast<std::int64_t>(ids.size())}, DType::kI32, Device::cpu());
}

TEST(EmbeddingIds, OutOfRangeIdsAreAnErrorAndWriteNothing) {
  backend::cpu::CpuBackend be;
  HostTensor table = random_tensor({5, 3}, 204), y = random_tensor({3, 3}, 205);
  HostTensor dtable = random_tensor({5, 3}, 206);
  const HostTensor y_before = y, dtable_before = dtable;
  std::vector<std::int32_t> touched(5, 0);
  for (std::int32_t bad : {5, -1}) {
    std::vector<std::int32_t> ids = {0, bad, 4};
    EXPECT_THROW(be.embedding_forward(table.tensor(), id_tensor(ids), y.tensor()), Error);
    EXPECT_THROW(be.embedding_backward(y.tensor(), id_tensor(ids), Tensor(), dtable.tensor(),
                                       Tensor(touched.data(), {5}, DType::kI32, Device::cpu()),
                                       GradMode::kOverwrite),
                 Error);
  }
  EXPECT_EQ(y.data, y_before.data);
  EXPECT_EQ(dtable.data, dtable_before.data);
  EXPECT_EQ(touched, std::vector<std::int32_t>(5, 0));
}

TEST(CopyColumnsRanges, OutOfBoundsAndOverlapAreRejected) {
  backend::cpu::CpuBackend be;
  HostTensor a({3, 6}), b({3, 4}), c({2, 4});
  EXPECT_THROW(be.copy_columns(a.tensor(), 3, b.tensor(), 0, 4, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, b.tensor(), 1, 4, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, c.tensor(), 0, 2, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), 0, a.tensor(), 2, 3, GradMode::kOverwrite), Error);
  EXPECT_THROW(be.copy_columns(a.tensor(), -1, b.tensor(), 0, 1, GradMode::kOverwrite), Error);
}

// --- Adam: defaults, and the sparse update of a fully touched table ----------------------
AdamParams adam(float lr, float wd, bool decoupled, float grad_scale = 1.0f) {
  AdamParams p;
  p.learning_rate = lr, p.weight_decay = wd, p.decoupled = decoupled, p.grad_scale = grad_scale;
  return p;
}

TEST(Adam, DefaultsAreTorchs) {
  const AdamParams p;
  EXPECT_EQ(p.beta1, 0.9f);
  EXPECT_EQ(p.beta2, 0.999f);
  EXPECT_EQ(p.epsilon, 1e-8f);
  EXPECT_EQ(p.weight_decay, 0.0f);
}

struct Table {
  HostTensor w, m, v;
};

Table make_table(std::int64_t rows, std::int64_t cols) {
  return {random_tensor({rows, cols}, 311), random_positive({rows, cols}, 312, 0.0f, 0.1f),
          random_positive({rows, cols}, 313, 0.0f, 0.01f)};
}

TEST(SparseAdam, AllRowsTouchedTakesAdamsStepBitForBit) {
  constexpr std::int64_t kRows = 6, kCols = 7;
  const AdamParams p = adam(1e-2f, 0.05f, true);
  backend::cpu::CpuBackend be;
  Table sparse = make_table(kRows, kCols), dense = sparse;
  std::int32_t sparse_step = 0, dense_step = 0;
  std::vector<std::int32_t> touched(kRows, 1);
  HostTensor g = random_tensor({kRows, kCols}, 321);
  be.sparse_adam_update(p, Tensor(&sparse_step, {1}, DType::kI32, Device::cpu()), sparse.w.tensor(),
                        g.tensor(), sparse.m.tensor(), sparse.v.tensor(),
                        Tensor(touched.data(), {kRows}, DType::kI32, Device::cpu()));
  be.adam_update(p, Tensor(&dense_step, {1}, DType::kI32, Device::cpu()), dense.w.tensor(),
                 g.tensor(), dense.m.tensor(), dense.v.tensor());
  EXPECT_EQ(sparse.w.data, dense.w.data);
  EXPECT_EQ(sparse.m.data, dense.m.data);
  EXPECT_EQ(sparse.v.data, dense.v.data);
}

}  // namespace
}  // namespace dlbench::ops_test
