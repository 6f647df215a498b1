// Batch norm training (with the running-statistics update), inference and backward against
// the float64 reference.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_cases.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using op_cases::bn;
using op_cases::name;

using backend::BatchNormParams;
using backend::GradMode;

// Rows are N*H*W of an NHWC activation: a ResNet-like [2, 4, 4, 8], odd sizes, a batch with
// few rows and many channels, and a large momentum so the running update is visible.
const std::vector<BatchNormParams> kCases = {bn(2 * 4 * 4, 8), bn(2 * 7 * 5, 13), bn(3, 64),
                                             bn(8 * 2 * 2, 3, 0.5f), bn(4 * 6 * 6, 32)};

// Batch norm normalizes by sums over rows, so its fp32 error grows with them like a sum's;
// and y = gamma xhat + beta adds terms of magnitude up to ~4 that may cancel, so y near zero
// carries a few ulps of 4 (64 * 2^-24 ~ 4e-6) of absolute error.
Tolerance bn_tolerance(const BatchNormParams& p) {
  return {std::max(sum_tolerance(p.rows).atol, 64 * std::ldexp(1.0, -24)), 1e-5};
}

struct BnInputs {
  HostTensor x, gamma, beta, running_mean, running_var, dy;
};

BnInputs inputs(const BatchNormParams& p) {
  const Shape data{p.rows, p.channels}, channel{p.channels};
  BnInputs in{random_tensor(data, 11),
              random_positive(channel, 12, 0.5f, 1.5f),
              random_tensor(channel, 13),
              random_tensor(channel, 14),
              random_positive(channel, 15, 0.5f, 2.0f),
              random_tensor(data, 16)};
  // Shift channels so that means are not all near zero, but keep |mean| comparable to the
  // spread, as in real activations: oneDNN may compute the variance in one pass as
  // E[x^2] - mean^2, whose f32 error grows with mean^2 / var.
  for (std::int64_t i = 0; i < p.rows * p.channels; ++i)
    in.x.data[i] += 0.25f * static_cast<float>(i % p.channels % 4);
  return in;
}

class BatchNorm : public ::testing::TestWithParam<BatchNormParams> {};

TEST_P(BatchNorm, TrainingMatchesReferenceAndUpdatesRunningStats) {
  const BatchNormParams& p = GetParam();
  backend::cpu::CpuBackend be;
  BnInputs in = inputs(p);
  const ref::BatchNormTraining ref = ref::batch_norm_forward_training(
      p, in.x.as_double(), in.gamma.as_double(), in.beta.as_double(), in.running_mean.as_double(),
      in.running_var.as_double());
  HostTensor y = poisoned({p.rows, p.channels});
  HostTensor mean = poisoned({p.channels}), inv_std = poisoned({p.channels});
  be.batch_norm_forward_training(p, in.x.tensor(), in.gamma.tensor(), in.beta.tensor(), y.tensor(),
                                 mean.tensor(), inv_std.tensor(), in.running_mean.tensor(),
                                 in.running_var.tensor());
  const Tolerance tol = bn_tolerance(p);
  EXPECT_TRUE(all_close("y", y.data, ref.y, tol));
  EXPECT_TRUE(all_close("saved_mean", mean.data, ref.mean, tol));
  EXPECT_TRUE(all_close("saved_inv_std", inv_std.data, ref.inv_std, tol));
  EXPECT_TRUE(all_close("running_mean", in.running_mean.data, ref.running_mean, tol));
  EXPECT_TRUE(all_close("running_var", in.running_var.data, ref.running_var, tol));
}

TEST_P(BatchNorm, InferenceMatchesReference) {
  const BatchNormParams& p = GetParam();
  backend::cpu::CpuBackend be;
  BnInputs in = inputs(p);
  HostTensor y = poisoned({p.rows, p.channels});
  be.batch_norm_forward_inference(p, in.x.tensor(), in.gamma.tensor(), in.beta.tensor(),
                                  in.running_mean.tensor(), in.running_var.tensor(), y.tensor());
  const Vec ref = ref::batch_norm_forward_inference(
      p, in.x.as_double(), in.gamma.as_double(), in.beta.as_double(), in.running_mean.as_double(),
      in.running_var.as_double());
  EXPECT_TRUE(all_close("y", y.data, ref, kElementwise));
}

INSTANTIATE_TEST_SUITE_P(Cases, BatchNorm, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return name(info.param); });

struct BnBackwardCase {
  BatchNormParams p;
  GradMode mode;
};

class BatchNormBackward : public ::testing::TestWithParam<BnBackwardCase> {};

TEST_P(BatchNormBackward, MatchesReference) {
  const auto& [p, mode] = GetParam();
  backend::cpu::CpuBackend be;
  BnInputs in = inputs(p);
  // The statistics backward consumes, as forward training saved them (rounded to f32).
  const ref::BatchNormTraining fwd = ref::batch_norm_forward_training(
      p, in.x.as_double(), in.gamma.as_double(), in.beta.as_double(), in.running_mean.as_double(),
      in.running_var.as_double());
  HostTensor mean({p.channels}), inv_std({p.channels});
  mean.data = to_float(fwd.mean), inv_std.data = to_float(fwd.inv_std);
  HostTensor dx = initial_grad(mode, {p.rows, p.channels}, 17);
  const HostTensor before = dx;
  HostTensor dgamma = poisoned({p.channels}), dbeta = poisoned({p.channels});
  be.batch_norm_backward(p, in.x.tensor(), in.dy.tensor(), in.gamma.tensor(), mean.tensor(),
                         inv_std.tensor(), dx.tensor(), dgamma.tensor(), dbeta.tensor(), mode);
  const ref::BatchNormGrads ref =
      ref::batch_norm_backward(p, in.x.as_double(), in.dy.as_double(), in.gamma.as_double(),
                               mean.as_double(), inv_std.as_double());
  const Tolerance tol{sum_tolerance(p.rows).atol, 1e-4};
  EXPECT_TRUE(all_close("dx", dx.data, expected_grad(mode, before, ref.dx), tol));
  EXPECT_TRUE(all_close("dgamma", dgamma.data, ref.dgamma, sum_tolerance(p.rows)));
  EXPECT_TRUE(all_close("dbeta", dbeta.data, ref.dbeta, sum_tolerance(p.rows)));
}

std::vector<BnBackwardCase> backward_cases() {
  std::vector<BnBackwardCase> out;
  for (const auto& p : kCases)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) out.push_back({p, m});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, BatchNormBackward, ::testing::ValuesIn(backward_cases()),
                         [](const auto& info) {
                           return name(info.param.p) + std::string("_") +
                                  mode_name(info.param.mode);
                         });

}  // namespace
}  // namespace dlbench::ops_test
