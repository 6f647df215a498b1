// ReLU, add, accumulate, softmax and sigmoid binary cross-entropy, SGD and fills against the
// float64 reference; the CPU backend's refusal of non-f32 dtypes.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::Activation;
using backend::GradMode;

std::string shape_name(const Shape& s) {
  std::ostringstream o;
  for (int i = 0; i < s.rank(); ++i) o << (i ? "x" : "") << s[i];
  return o.str();
}

const std::vector<Shape> kShapes = {{7}, {2, 5, 5, 3}, {1000}, {4, 33}};

class Elementwise : public ::testing::TestWithParam<Shape> {};

TEST_P(Elementwise, ReluForward) {
  backend::cpu::CpuBackend be;
  HostTensor x = random_tensor(GetParam(), 41), y = poisoned(GetParam());
  be.activation_forward(Activation::kRelu, x.tensor(), y.tensor());
  EXPECT_TRUE(all_close("y", y.data, ref::relu_forward(x.as_double()), {0, 0}));
}

TEST_P(Elementwise, IdentityForwardAndBackward) {
  backend::cpu::CpuBackend be;
  HostTensor x = random_tensor(GetParam(), 42), y = poisoned(GetParam());
  be.activation_forward(Activation::kNone, x.tensor(), y.tensor());
  EXPECT_TRUE(all_close("y", y.data, x.as_double(), {0, 0}));
  HostTensor dx = random_tensor(GetParam(), 43);
  const HostTensor before = dx;
  be.activation_backward(Activation::kNone, y.tensor(), x.tensor(), dx.tensor(),
                         GradMode::kAccumulate);
  EXPECT_TRUE(all_close("dx", dx.data, expected_grad(GradMode::kAccumulate, before, x.as_double()),
                        kElementwise));
}

TEST_P(Elementwise, ReluBackwardBothModes) {
  backend::cpu::CpuBackend be;
  const Vec y = ref::relu_forward(random_tensor(GetParam(), 44).as_double());
  HostTensor yt(GetParam());
  yt.data = to_float(y);
  HostTensor dy = random_tensor(GetParam(), 45);
  const Vec ref = ref::relu_backward(y, dy.as_double());
  for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
    HostTensor dx = initial_grad(mode, GetParam(), 46);
    const HostTensor before = dx;
    be.activation_backward(Activation::kRelu, yt.tensor(), dy.tensor(), dx.tensor(), mode);
    EXPECT_TRUE(all_close(std::string("dx ") + mode_name(mode), dx.data,
                          expected_grad(mode, before, ref), kElementwise));
  }
}

TEST_P(Elementwise, AddAndAccumulate) {
  backend::cpu::CpuBackend be;
  HostTensor a = random_tensor(GetParam(), 47), b = random_tensor(GetParam(), 48);
  HostTensor y = poisoned(GetParam());
  be.add(a.tensor(), b.tensor(), y.tensor());
  Vec sum(a.data.size());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = a.as_double()[i] + b.as_double()[i];
  EXPECT_TRUE(all_close("add", y.data, sum, kElementwise));
  be.accumulate(a.tensor(), b.tensor());
  EXPECT_TRUE(all_close("accumulate", b.data, sum, kElementwise));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Elementwise, ::testing::ValuesIn(kShapes),
                         [](const auto& info) { return shape_name(info.param); });

// --- softmax cross-entropy -------------------------------------------------------------
struct LossCase {
  std::int64_t rows, classes;
  float scale;       // loss-scaling factor carried into dlogits
  float logit_gain;  // large gains test the max-subtraction (exp would overflow without it)
};

class SoftmaxCrossEntropy : public ::testing::TestWithParam<LossCase> {};

TEST_P(SoftmaxCrossEntropy, LossAndGradientMatchReference) {
  const LossCase c = GetParam();
  backend::cpu::CpuBackend be;
  HostTensor logits = random_tensor({c.rows, c.classes}, 51);
  for (float& v : logits.data) v *= c.logit_gain;
  std::vector<std::int32_t> labels(c.rows);
  be.fill_uniform_int(Tensor(labels.data(), {c.rows}, DType::kI32, Device::cpu()), 0, c.classes,
                      52);
  HostTensor loss = poisoned({1}), dlogits = poisoned({c.rows, c.classes});
  be.softmax_cross_entropy(logits.tensor(),
                           Tensor(labels.data(), {c.rows}, DType::kI32, Device::cpu()),
                           loss.tensor(), dlogits.tensor(), c.scale);
  const ref::SoftmaxCrossEntropy ref =
      ref::softmax_cross_entropy(c.rows, c.classes, logits.as_double(), labels, c.scale);
  EXPECT_TRUE(all_close("loss", loss.data, {ref.loss}, kElementwise));
  EXPECT_TRUE(all_close("dlogits", dlogits.data, ref.dlogits, {1e-7 * c.scale, 1e-5}));
}

INSTANTIATE_TEST_SUITE_P(Cases, SoftmaxCrossEntropy,
                         ::testing::Values(LossCase{4, 10, 1, 1}, LossCase{8, 1000, 1, 3},
                                           LossCase{3, 5, 128, 1}, LossCase{6, 7, 1, 200}),
                         [](const auto& info) {
                           const LossCase& c = info.param;
                           std::ostringstream o;
                           o << "rows" << c.rows << "_classes" << c.classes << "_scale" << c.scale
                             << "_gain" << c.logit_gain;
                           return o.str();
                         });

TEST(SoftmaxCrossEntropyLabels, OutOfRangeLabelIsAnError) {
  backend::cpu::CpuBackend be;
  HostTensor logits = random_tensor({2, 3}, 53), loss({1}), dlogits({2, 3});
  std::vector<std::int32_t> labels = {0, 3};
  EXPECT_THROW(be.softmax_cross_entropy(logits.tensor(),
                                        Tensor(labels.data(), {2}, DType::kI32, Device::cpu()),
                                        loss.tensor(), dlogits.tensor(), 1.0f),
               Error);
}

// --- SGD ---------------------------------------------------------------------------------
// --- sigmoid binary cross-entropy -----------------------------------------------------------
// Logits of both signs, targets 0 and 1 alternating, with and without a loss scale.
TEST(SigmoidBinaryCrossEntropy, LossAndGradientMatchReference) {
  for (const auto& [rows, scale] : {std::pair<std::int64_t, float>{1, 1}, {37, 1}, {500, 256}}) {
    SCOPED_TRACE("rows " + std::to_string(rows) + " scale " + std::to_string(scale));
    backend::cpu::CpuBackend be;
    HostTensor logits = random_tensor({rows, 1}, 55), targets({rows, 1});
    for (float& v : logits.data) v *= 8;  // |x| up to 8: sigmoid near 0 and 1
    for (std::int64_t i = 0; i < rows; ++i) targets.data[i] = static_cast<float>(i % 2);
    HostTensor loss = poisoned({1}), dlogits = poisoned({rows, 1});
    be.sigmoid_binary_cross_entropy(logits.tensor(), targets.tensor(), loss.tensor(),
                                    dlogits.tensor(), scale);
    const ref::BinaryCrossEntropy ref =
        ref::sigmoid_binary_cross_entropy(logits.as_double(), targets.as_double(), scale);
    EXPECT_TRUE(all_close("loss", loss.data, {ref.loss}, kElementwise));
    EXPECT_TRUE(all_close("dlogits", dlogits.data, ref.dlogits, {1e-7 * scale, 1e-5}));
  }
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

struct SgdCase {
  std::int64_t size;
  backend::SgdParams p;
};

class Sgd : public ::testing::TestWithParam<SgdCase> {};

TEST_P(Sgd, TwoStepsMatchReference) {
  const auto& [size, p] = GetParam();
  backend::cpu::CpuBackend be;
  HostTensor w = random_tensor({size}, 61), v = random_tensor({size}, 62);
  ref::SgdState state{w.as_double(), v.as_double()};
  for (std::uint64_t step = 0; step < 2; ++step) {
    HostTensor g = random_tensor({size}, 63 + step);
    be.sgd_momentum_update(p, w.tensor(), g.tensor(), v.tensor());
    state = ref::sgd_momentum_update(p, state.weights, g.as_double(), state.velocity);
  }
  EXPECT_TRUE(all_close("weights", w.data, state.weights, kElementwise));
  EXPECT_TRUE(all_close("velocity", v.data, state.velocity, kElementwise));
}

INSTANTIATE_TEST_SUITE_P(Cases, Sgd,
                         ::testing::Values(SgdCase{1000, {0.1f, 0.9f, 1e-4f}},
                                           SgdCase{17, {0.01f, 0.0f, 0.0f}},
                                           SgdCase{64, {0.05f, 0.9f, 5e-4f}},
                                           SgdCase{33, {0.05f, 0.9f, 5e-4f, 1.0f / 1024}}),
                         [](const auto& info) {
                           const SgdCase& c = info.param;
                           std::ostringstream o;
                           o << "n" << c.size << "_lr" << c.p.learning_rate * 1000 << "e_3_m"
                             << c.p.momentum * 10 << "_wd" << c.p.weight_decay * 1e5 << "e_5"
                             << "_gs" << c.p.grad_scale * 1024 << "of1024";
                           std::string s = o.str();
                           for (char& ch : s)
                             if (ch == '.') ch = 'p';
                           return s;
                         });

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

}  // namespace
}  // namespace dlbench::ops_test
