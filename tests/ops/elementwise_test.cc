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

TEST(SoftmaxCrossEntropyLabels, OutOfRangeLabelIsAnError) {
  backend::cpu::CpuBackend be;
  HostTensor logits = random_tensor({2, 3}, 53), loss({1}), dlogits({2, 3});
  std::vector<std::int32_t> labels = {0, 3};
  EXPECT_THROW(be.softmax_cross_entropy(logits.tensor(),
                                        Tensor(labels.data(), {2}, DType::kI32, Device::cpu()),
                                        loss.tensor(), dlogits.tensor(), 1.0f),
               Error);
}

// --- sigmoid binary cross-entropy -----------------------------------------------------------
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
