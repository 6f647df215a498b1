// Batch norm training (with the running statistics), inference and backward on our CUDA kernels
// against the CPU backend: f32, f16 and bf16 data, f32 parameters and statistics. The cases
// cover both kernel paths (16-byte packs when channels are a multiple of the pack, single
// elements otherwise: 3, 10, 13 channels), one to many row chunks, and ResNet-sized blocks.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/op_cases.h"
#include "tests/ops_gpu/gpu_test_util.h"

namespace dlbench::gpu_test {
namespace {

using op_cases::bn;
using op_cases::name;

using backend::BatchNormParams;

// As the CPU tests, plus ResNet-sized blocks (many rows: stage 3 at batch 256 with 256
// channels, stage 1 at batch 64 with 64) and channel counts that leave pack tails (3, 10).
const std::vector<BatchNormParams> kCases = {
    bn(2 * 4 * 4, 8),    bn(2 * 7 * 5, 13),      bn(3, 64),           bn(8 * 2 * 2, 3, 0.5f),
    bn(4 * 14 * 14, 64), bn(2 * 9 * 9, 24),      bn(1000, 3),         bn(37 * 5, 10),
    bn(4 * 7 * 7, 2048), bn(256 * 14 * 14, 256), bn(64 * 56 * 56, 64)};

// Normalized values have magnitude up to ~4 (a few sigma times gamma <= 1.5, plus beta).
constexpr double kNormalizedMagnitude = 4.0;

// f32: every output depends on per-channel sums over the rows (mean, variance, dgamma, dbeta),
// each a few ulps per row of relative error, so atol grows with the rows as a sum's does
// (with a floor of a few ulps of the magnitude: y = gamma xhat + beta may cancel).
// f16/bf16: the inputs are identical on both sides and the statistics are f32, so the error
// is the rounding of the output to the low precision (per-element outputs) or the f32 sums
// (per-channel outputs, which are f32).
Tolerance bn_tolerance(const Precision& prec, const BatchNormParams& p, bool per_element) {
  const double magnitude = per_element ? kNormalizedMagnitude : 1.0;
  if (prec.dtype == DType::kF32)
    return {std::max<double>(2.0 * static_cast<double>(p.rows), 64.0) * std::ldexp(1.0, -24) *
                magnitude,
            1e-5};
  return per_element ? sum_tolerance(prec, 1, magnitude) : sum_tolerance(prec, p.rows);
}

struct BnData {
  HostTensor x, gamma, beta, running_mean, running_var, dy;
};

BnData make_data(const BatchNormParams& p, DType dtype) {
  const Shape data{p.rows, p.channels}, channel{p.channels};
  BnData d{ops_test::random_tensor(data, 11),
           ops_test::random_positive(channel, 12, 0.5f, 1.5f),
           ops_test::random_tensor(channel, 13),
           ops_test::random_tensor(channel, 14),
           ops_test::random_positive(channel, 15, 0.5f, 2.0f),
           ops_test::random_tensor(data, 16)};
  // Channel means away from zero but comparable to the spread, as in real activations.
  for (std::int64_t i = 0; i < p.rows * p.channels; ++i)
    d.x.data[i] += 0.25f * static_cast<float>(i % p.channels % 4);
  round_in_place(dtype, d.x), round_in_place(dtype, d.dy);
  return d;
}

class BatchNormGpu : public GpuOpTestP<Precision> {};

TEST_P(BatchNormGpu, TrainingForward) {
  const Precision& prec = GetParam();
  for (const BatchNormParams& p : kCases) {
    SCOPED_TRACE(name(p));
    BnData d = make_data(p, prec.dtype);
    const Shape data{p.rows, p.channels}, channel{p.channels};
    GpuTensor x = upload(d.x, prec.dtype), gamma = upload(d.gamma, DType::kF32),
              beta = upload(d.beta, DType::kF32), rmean = upload(d.running_mean, DType::kF32),
              rvar = upload(d.running_var, DType::kF32);
    GpuTensor y = poisoned(data, prec.dtype), mean = poisoned(channel, DType::kF32),
              inv_std = poisoned(channel, DType::kF32);
    HostTensor y_cpu(data), mean_cpu(channel), inv_std_cpu(channel);
    cpu().batch_norm_forward_training(p, d.x.tensor(), d.gamma.tensor(), d.beta.tensor(),
                                      y_cpu.tensor(), mean_cpu.tensor(), inv_std_cpu.tensor(),
                                      d.running_mean.tensor(), d.running_var.tensor());
    gpu().batch_norm_forward_training(p, x.tensor(), gamma.tensor(), beta.tensor(), y.tensor(),
                                      mean.tensor(), inv_std.tensor(), rmean.tensor(),
                                      rvar.tensor());
    const Tolerance stats = bn_tolerance(prec, p, false);
    EXPECT_TRUE(gpu_close(name(p) + " y", y.download(), y_cpu.data, bn_tolerance(prec, p, true)));
    EXPECT_TRUE(gpu_close(name(p) + " saved_mean", mean.download(), mean_cpu.data, stats));
    EXPECT_TRUE(gpu_close(name(p) + " saved_inv_std", inv_std.download(), inv_std_cpu.data, stats));
    EXPECT_TRUE(gpu_close(name(p) + " running_mean", rmean.download(), d.running_mean.data, stats));
    EXPECT_TRUE(
        gpu_close(name(p) + " running_var (unbiased)", rvar.download(), d.running_var.data, stats));
  }
}

TEST_P(BatchNormGpu, InferenceForward) {
  const Precision& prec = GetParam();
  for (const BatchNormParams& p : kCases) {
    SCOPED_TRACE(name(p));
    BnData d = make_data(p, prec.dtype);
    const Shape data{p.rows, p.channels};
    GpuTensor x = upload(d.x, prec.dtype), gamma = upload(d.gamma, DType::kF32),
              beta = upload(d.beta, DType::kF32), rmean = upload(d.running_mean, DType::kF32),
              rvar = upload(d.running_var, DType::kF32);
    GpuTensor y = poisoned(data, prec.dtype);
    HostTensor y_cpu(data);
    cpu().batch_norm_forward_inference(p, d.x.tensor(), d.gamma.tensor(), d.beta.tensor(),
                                       d.running_mean.tensor(), d.running_var.tensor(),
                                       y_cpu.tensor());
    gpu().batch_norm_forward_inference(p, x.tensor(), gamma.tensor(), beta.tensor(), rmean.tensor(),
                                       rvar.tensor(), y.tensor());
    EXPECT_TRUE(gpu_close(name(p) + " y", y.download(), y_cpu.data, bn_tolerance(prec, p, true)));
  }
}

TEST_P(BatchNormGpu, Backward) {
  const Precision& prec = GetParam();
  for (const BatchNormParams& p : kCases) {
    for (GradMode mode : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      SCOPED_TRACE(name(p) + " " + ops_test::mode_name(mode));
      BnData d = make_data(p, prec.dtype);
      const Shape data{p.rows, p.channels}, channel{p.channels};
      // Statistics from a CPU forward pass, shared by both backends.
      HostTensor y_cpu(data), mean(channel), inv_std(channel);
      cpu().batch_norm_forward_training(p, d.x.tensor(), d.gamma.tensor(), d.beta.tensor(),
                                        y_cpu.tensor(), mean.tensor(), inv_std.tensor(),
                                        d.running_mean.tensor(), d.running_var.tensor());
      HostTensor dx_cpu = ops_test::random_tensor(data, 17);
      round_in_place(prec.dtype, dx_cpu);
      GpuTensor dx = upload(dx_cpu, prec.dtype);
      if (mode == GradMode::kOverwrite) dx.poison();
      HostTensor dgamma_cpu(channel), dbeta_cpu(channel);
      cpu().batch_norm_backward(p, d.x.tensor(), d.dy.tensor(), d.gamma.tensor(), mean.tensor(),
                                inv_std.tensor(), dx_cpu.tensor(), dgamma_cpu.tensor(),
                                dbeta_cpu.tensor(), mode);
      GpuTensor x = upload(d.x, prec.dtype), dy = upload(d.dy, prec.dtype),
                gamma = upload(d.gamma, DType::kF32), m = upload(mean, DType::kF32),
                s = upload(inv_std, DType::kF32);
      GpuTensor dgamma = poisoned(channel, DType::kF32), dbeta = poisoned(channel, DType::kF32);
      gpu().batch_norm_backward(p, x.tensor(), dy.tensor(), gamma.tensor(), m.tensor(), s.tensor(),
                                dx.tensor(), dgamma.tensor(), dbeta.tensor(), mode);
      // dgamma and dbeta are sums over the rows of terms up to kNormalizedMagnitude.
      const Tolerance sums =
          prec.dtype == DType::kF32 ? bn_tolerance(prec, p, true) : bn_tolerance(prec, p, false);
      EXPECT_TRUE(gpu_close(name(p) + " dx " + ops_test::mode_name(mode), dx.download(),
                            dx_cpu.data, bn_tolerance(prec, p, true)));
      EXPECT_TRUE(gpu_close(name(p) + " dgamma", dgamma.download(), dgamma_cpu.data, sums));
      EXPECT_TRUE(gpu_close(name(p) + " dbeta", dbeta.download(), dbeta_cpu.data, sums));
    }
  }
}

// The sums run in a fixed order (no atomics), so running an op twice gives the same bits.
TEST_P(BatchNormGpu, Deterministic) {
  const Precision& prec = GetParam();
  const BatchNormParams p = bn(256 * 14 * 14, 256);
  BnData d = make_data(p, prec.dtype);
  const Shape data{p.rows, p.channels}, channel{p.channels};
  GpuTensor x = upload(d.x, prec.dtype), dy = upload(d.dy, prec.dtype),
            gamma = upload(d.gamma, DType::kF32), beta = upload(d.beta, DType::kF32);
  GpuTensor y = poisoned(data, prec.dtype), dx = poisoned(data, prec.dtype),
            mean = poisoned(channel, DType::kF32), inv_std = poisoned(channel, DType::kF32),
            dgamma = poisoned(channel, DType::kF32), dbeta = poisoned(channel, DType::kF32);
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; ++run) {
    GpuTensor rmean = upload(d.running_mean, DType::kF32),
              rvar = upload(d.running_var, DType::kF32);
    gpu().batch_norm_forward_training(p, x.tensor(), gamma.tensor(), beta.tensor(), y.tensor(),
                                      mean.tensor(), inv_std.tensor(), rmean.tensor(),
                                      rvar.tensor());
    gpu().batch_norm_backward(p, x.tensor(), dy.tensor(), gamma.tensor(), mean.tensor(),
                              inv_std.tensor(), dx.tensor(), dgamma.tensor(), dbeta.tensor(),
                              GradMode::kOverwrite);
    std::vector<std::vector<float>> out = {y.download(),    mean.download(), inv_std.download(),
                                           rvar.download(), dx.download(),   dgamma.download(),
                                           dbeta.download()};
    if (run == 0) {
      first = std::move(out);
      continue;
    }
    const char* names[] = {"y",  "saved_mean", "saved_inv_std", "running_var",
                           "dx", "dgamma",     "dbeta"};
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto [a, b] = std::mismatch(out[i].begin(), out[i].end(), first[i].begin());
      EXPECT_TRUE(a == out[i].end()) << names[i] << " differs between runs at index "
                                     << (a - out[i].begin()) << ": " << *a << " vs " << *b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, BatchNormGpu, ::testing::ValuesIn(float_precisions()),
                         precision_name);

}  // namespace
}  // namespace dlbench::gpu_test
