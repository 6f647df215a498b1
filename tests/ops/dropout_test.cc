// Dropout's mask on the CPU backend (the op cases hold every backend to the same mask): it keeps
// about 1 - p of the elements and scales them by 1 / (1 - p), each forward call draws a new mask
// while backward reuses the forward's, the seed picks the stream, and the door refuses a
// probability outside [0, 1).
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "tests/ops/host_tensor.h"

namespace dlbench::ops_test {
namespace {

using backend::DropoutParams;
using backend::GradMode;

constexpr std::int64_t kN = 200'000;

struct DropoutRun {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  std::int32_t step = 0;
  std::vector<float> x = std::vector<float>(kN, 1.0f), y = std::vector<float>(kN, -1.0f);
  Tensor step_tensor() { return Tensor(&step, {1}, DType::kI32, Device::cpu()); }
  static Tensor of(std::vector<float>& v) {
    return Tensor(v.data(), {static_cast<std::int64_t>(v.size())}, DType::kF32, Device::cpu());
  }
  std::vector<float> forward(const DropoutParams& p) {
    be->dropout_forward(p, step_tensor(), of(x), of(y));
    return y;
  }
};

double kept_share(const std::vector<float>& y) {
  std::int64_t kept = 0;
  for (float v : y) kept += v != 0.0f;
  return static_cast<double>(kept) / static_cast<double>(y.size());
}

TEST(DropoutTest, KeepsAboutOneMinusPAndScalesWhatItKeeps) {
  for (float p : {0.1f, 0.5f, 0.9f}) {
    DropoutRun r;
    const std::vector<float> y = r.forward({p, 7});
    // 200,000 draws: the kept share's standard deviation is under 0.0012.
    EXPECT_NEAR(kept_share(y), 1.0 - p, 0.006) << p;
    for (float v : y) ASSERT_TRUE(v == 0.0f || v == 1.0f / (1.0f - p)) << v;
    EXPECT_EQ(r.step, 1);
  }
}

TEST(DropoutTest, EachCallDrawsAnewAndBackwardReusesTheForwardsMask) {
  DropoutRun r;
  const DropoutParams p{0.5f, 3};
  const std::vector<float> first = r.forward(p);
  const std::vector<float> second = r.forward(p);
  std::int64_t same = 0;
  for (std::int64_t i = 0; i < kN; ++i) same += (first[i] == 0.0f) == (second[i] == 0.0f);
  EXPECT_NEAR(static_cast<double>(same) / kN, 0.5, 0.01);  // independent masks agree half the time
  std::vector<float> dy(kN, 3.0f), dx(kN, -1.0f);
  r.be->dropout_backward(p, r.step_tensor(), DropoutRun::of(dy), DropoutRun::of(dx),
                         GradMode::kOverwrite);
  for (std::int64_t i = 0; i < kN; ++i) ASSERT_EQ(dx[i], second[i] * 3.0f) << i;
  EXPECT_EQ(r.step, 2);  // backward does not advance the counter
  DropoutRun other;
  const std::vector<float> other_seed = other.forward({0.5f, 4});
  same = 0;
  for (std::int64_t i = 0; i < kN; ++i) same += (first[i] == 0.0f) == (other_seed[i] == 0.0f);
  EXPECT_NEAR(static_cast<double>(same) / kN, 0.5, 0.01);
}

TEST(DropoutTest, ProbabilityOutsideZeroToOneIsRefused) {
  DropoutRun r;
  EXPECT_THROW(r.forward({1.0f, 1}), Error);
  EXPECT_THROW(r.forward({-0.1f, 1}), Error);
  EXPECT_EQ(r.step, 0);  // a refused call does not count
}

}  // namespace
}  // namespace dlbench::ops_test
