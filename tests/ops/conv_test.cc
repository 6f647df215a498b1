// Convolution forward, backward-data and backward-weights against the float64 reference.
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using op_cases::conv;
using op_cases::name;

using backend::Conv2dParams;
using backend::GradMode;

// The shapes of the model suite, shrunk: ResNet's 1x1 and 3x3 blocks, its 7x7 stride-2 stem,
// its stride-2 3x3 and 1x1 downsamples, non-square images and filters, dilation.
const std::vector<Conv2dParams> kCases = {
    conv(2, 7, 7, 16, 24, 1, 1, 1, 0, false),  conv(2, 8, 8, 8, 16, 1, 1, 2, 0, true),
    conv(2, 10, 10, 16, 16, 3, 3, 1, 1, true), conv(2, 10, 10, 16, 16, 3, 3, 1, 1, false),
    conv(2, 20, 20, 3, 8, 7, 7, 2, 3, false),  conv(1, 19, 17, 3, 8, 7, 7, 2, 3, true),
    conv(2, 12, 12, 8, 8, 3, 3, 2, 1, false),  conv(3, 13, 9, 5, 7, 3, 3, 2, 1, true),
    conv(2, 9, 13, 5, 7, 1, 3, 1, 0, true),    conv(2, 11, 11, 4, 6, 3, 3, 1, 2, false, 2),
};

struct ConvBackwardCase {
  Conv2dParams p;
  GradMode mode;
};

std::vector<ConvBackwardCase> with_modes(const std::vector<Conv2dParams>& cases) {
  std::vector<ConvBackwardCase> out;
  for (const auto& p : cases)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) out.push_back({p, m});
  return out;
}

// Inputs of one case, seeded by a fixed number so a failure reproduces.
struct ConvInputs {
  HostTensor x, w, bias, dy;
};

ConvInputs inputs(const Conv2dParams& p) {
  return {random_tensor(p.input_shape(), 1), random_tensor(p.weight_shape(), 2),
          random_tensor({p.k}, 3), random_tensor(p.output_shape(), 4)};
}

class ConvForward : public ::testing::TestWithParam<Conv2dParams> {};

TEST_P(ConvForward, MatchesReference) {
  const Conv2dParams& p = GetParam();
  backend::cpu::CpuBackend be;
  ConvInputs in = inputs(p);
  HostTensor y = poisoned(p.output_shape());
  be.conv2d_forward(p, in.x.tensor(), in.w.tensor(), p.bias ? in.bias.tensor() : Tensor(),
                    y.tensor());
  const Vec ref = ref::conv2d_forward(p, in.x.as_double(), in.w.as_double(), in.bias.as_double());
  EXPECT_TRUE(all_close("y", y.data, ref, sum_tolerance(p.r * p.s * p.c)));
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvForward, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return name(info.param); });

class ConvBackward : public ::testing::TestWithParam<ConvBackwardCase> {};

TEST_P(ConvBackward, DataMatchesReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  ConvInputs in = inputs(p);
  HostTensor dx = initial_grad(mode, p.input_shape(), 5);
  const HostTensor before = dx;
  be.conv2d_backward_data(p, in.dy.tensor(), in.w.tensor(), dx.tensor(), mode);
  const Vec ref = ref::conv2d_backward_data(p, in.dy.as_double(), in.w.as_double());
  EXPECT_TRUE(
      all_close("dx", dx.data, expected_grad(mode, before, ref), sum_tolerance(p.r * p.s * p.k)));
}

TEST_P(ConvBackward, WeightsMatchReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  ConvInputs in = inputs(p);
  HostTensor dw = initial_grad(mode, p.weight_shape(), 6);
  HostTensor db = initial_grad(mode, {p.k}, 7);
  const HostTensor dw_before = dw, db_before = db;
  be.conv2d_backward_weights(p, in.x.tensor(), in.dy.tensor(), dw.tensor(),
                             p.bias ? db.tensor() : Tensor(), mode);
  const ref::WeightGrads ref = ref::conv2d_backward_weights(p, in.x.as_double(), in.dy.as_double());
  const std::int64_t terms = p.n * p.out_h() * p.out_w();
  EXPECT_TRUE(
      all_close("dw", dw.data, expected_grad(mode, dw_before, ref.dw), sum_tolerance(terms)));
  if (p.bias) {
    EXPECT_TRUE(all_close("dbias", db.data, expected_grad(mode, db_before, ref.dbias),
                          sum_tolerance(terms)));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvBackward, ::testing::ValuesIn(with_modes(kCases)),
                         [](const auto& info) {
                           return name(info.param.p) + std::string("_") +
                                  mode_name(info.param.mode);
                         });

// A training loop calls the same ops with the same parameters every step: the second step
// must find every primitive in the cache.
TEST(ConvCache, RepeatedStepCreatesNoPrimitives) {
  const Conv2dParams p = conv(2, 8, 8, 4, 4, 3, 3, 1, 1, true);
  backend::cpu::CpuBackend be;
  ConvInputs in = inputs(p);
  HostTensor y(p.output_shape()), dx(p.input_shape()), dw(p.weight_shape()), db({p.k});
  auto step = [&] {
    be.conv2d_forward(p, in.x.tensor(), in.w.tensor(), in.bias.tensor(), y.tensor());
    be.conv2d_backward_data(p, in.dy.tensor(), in.w.tensor(), dx.tensor(), GradMode::kOverwrite);
    be.conv2d_backward_weights(p, in.x.tensor(), in.dy.tensor(), dw.tensor(), db.tensor(),
                               GradMode::kOverwrite);
  };
  step();
  const std::size_t after_first = be.cached_primitives();
  EXPECT_EQ(after_first, 3u);
  step();
  EXPECT_EQ(be.cached_primitives(), after_first);
}

}  // namespace
}  // namespace dlbench::ops_test
