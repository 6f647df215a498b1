// Matmul (inner product) with bias and ReLU epilogues, forward and backward, against the
// float64 reference.
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using op_cases::mm;
using op_cases::name;

using backend::Activation;
using backend::GradMode;
using backend::MatmulParams;

// Classifier heads (ResNet's 2048 -> classes, shrunk), VGG's ReLU'd fully connected layers,
// a single row, odd sizes.
const std::vector<MatmulParams> kCases = {
    mm(4, 16, 8, false, Activation::kNone), mm(8, 64, 10, true, Activation::kNone),
    mm(5, 33, 17, true, Activation::kRelu), mm(1, 128, 64, true, Activation::kRelu),
    mm(16, 7, 3, false, Activation::kRelu), mm(32, 256, 100, true, Activation::kNone),
};

struct MatmulInputs {
  HostTensor x, w, bias, dy;
};

MatmulInputs inputs(const MatmulParams& p) {
  return {random_tensor({p.m, p.k}, 31), random_tensor({p.n, p.k}, 32), random_tensor({p.n}, 33),
          random_tensor({p.m, p.n}, 34)};
}

class MatmulForward : public ::testing::TestWithParam<MatmulParams> {};

TEST_P(MatmulForward, MatchesReference) {
  const MatmulParams& p = GetParam();
  backend::cpu::CpuBackend be;
  MatmulInputs in = inputs(p);
  HostTensor y = poisoned({p.m, p.n});
  be.matmul_forward(p, in.x.tensor(), in.w.tensor(), p.bias ? in.bias.tensor() : Tensor(),
                    y.tensor());
  const Vec ref = ref::matmul_forward(p, in.x.as_double(), in.w.as_double(), in.bias.as_double());
  EXPECT_TRUE(all_close("y", y.data, ref, sum_tolerance(p.k)));
}

INSTANTIATE_TEST_SUITE_P(Cases, MatmulForward, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return name(info.param); });

struct MatmulBackwardCase {
  MatmulParams p;
  GradMode mode;
};

class MatmulBackward : public ::testing::TestWithParam<MatmulBackwardCase> {};

TEST_P(MatmulBackward, DataMatchesReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  MatmulInputs in = inputs(p);
  HostTensor dx = initial_grad(mode, {p.m, p.k}, 35);
  const HostTensor before = dx;
  be.matmul_backward_data(p, in.dy.tensor(), in.w.tensor(), dx.tensor(), mode);
  const Vec ref = ref::matmul_backward_data(p, in.dy.as_double(), in.w.as_double());
  EXPECT_TRUE(all_close("dx", dx.data, expected_grad(mode, before, ref), sum_tolerance(p.n)));
}

TEST_P(MatmulBackward, WeightsMatchReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  MatmulInputs in = inputs(p);
  HostTensor dw = initial_grad(mode, {p.n, p.k}, 36), db = initial_grad(mode, {p.n}, 37);
  const HostTensor dw_before = dw, db_before = db;
  be.matmul_backward_weights(p, in.x.tensor(), in.dy.tensor(), dw.tensor(),
                             p.bias ? db.tensor() : Tensor(), mode);
  const ref::WeightGrads ref = ref::matmul_backward_weights(p, in.x.as_double(), in.dy.as_double());
  EXPECT_TRUE(all_close("dw", dw.data, expected_grad(mode, dw_before, ref.dw), sum_tolerance(p.m)));
  if (p.bias) {
    EXPECT_TRUE(
        all_close("dbias", db.data, expected_grad(mode, db_before, ref.dbias), sum_tolerance(p.m)));
  }
}

// Backward runs after the activation's own backward, so its parameters carry no activation.
std::vector<MatmulBackwardCase> backward_cases() {
  std::vector<MatmulBackwardCase> out;
  for (MatmulParams p : kCases) {
    p.activation = Activation::kNone;
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) out.push_back({p, m});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatmulBackward, ::testing::ValuesIn(backward_cases()),
                         [](const auto& info) {
                           return name(info.param.p) + std::string("_") +
                                  mode_name(info.param.mode);
                         });

}  // namespace
}  // namespace dlbench::ops_test
