// What the batch-norm op cases share: their shapes' names, tolerances, and inputs made the same
// way for every case (x shifted per channel, positive scales and variances, the ReLU's mask, the
// sums a convolution hands over).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/op_params.h"
#include "tests/ops/harness/tensors.h"

namespace dlbench::op_harness::batch_norm_inputs {

using backend::BatchNormParams;

inline BatchNormParams bn(std::int64_t rows, std::int64_t channels, float momentum = 0.1f) {
  BatchNormParams p;
  p.rows = rows, p.channels = channels, p.momentum = momentum;
  return p;
}

inline std::string name(const BatchNormParams& p) {
  std::ostringstream o;
  o << "rows" << p.rows << "_c" << p.channels << "_m" << static_cast<int>(p.momentum * 100);
  if (p.activation == backend::Activation::kRelu) o << (p.residual ? "_add_relu" : "_relu");
  return o.str();
}

// Against the reference: batch norm normalizes by sums over rows, so its fp32 error grows with
// them like a sum's; and y = gamma xhat + beta adds terms of magnitude up to ~4 that may
// cancel, so y near zero carries a few ulps of 4 (64 * 2^-24 ~ 4e-6) of absolute error.
inline Tolerance bn_tolerance(const BatchNormParams& p) {
  return {std::max(sum_tolerance(p.rows).atol, 64 * std::ldexp(1.0, -24)), 1e-5};
}

// Normalized values have magnitude up to ~4 (a few sigma times gamma <= 1.5, plus beta).
constexpr double kNormalizedMagnitude = 4.0;

// Against the CPU. f32: every output depends on per-channel sums over the rows (mean,
// variance, dgamma, dbeta), each a few ulps per row of relative error, so atol grows with the
// rows as a sum's does (with a floor of a few ulps of the magnitude: y = gamma xhat + beta may
// cancel). f16/bf16: the inputs are identical on both sides and the statistics are f32, so
// the error is the rounding of the output to the low precision (per-element outputs) or the
// f32 sums (per-channel outputs, which are f32).
inline Tolerance bn_tolerance(const Precision& prec, const BatchNormParams& p, bool per_element) {
  const double magnitude = per_element ? kNormalizedMagnitude : 1.0;
  if (prec.dtype == DType::kF32)
    return {std::max<double>(2.0 * static_cast<double>(p.rows), 64.0) * std::ldexp(1.0, -24) *
                magnitude,
            1e-5};
  return per_element ? sum_tolerance(prec, 1, magnitude) : sum_tolerance(prec, p.rows);
}

// x [rows, channels] with channels shifted so that means are not all near zero, but with
// |mean| comparable to the spread, as in real activations: oneDNN may compute the variance in
// one pass as E[x^2] - mean^2, whose f32 error grows with mean^2 / var.
inline HostTensor bn_input(const BatchNormParams& p, std::string name = "x",
                           std::uint64_t seed = 11) {
  HostTensor x = input(std::move(name), {p.rows, p.channels}, seed);
  for (std::int64_t i = 0; i < p.rows * p.channels; ++i)
    x.data[static_cast<std::size_t>(i)] += 0.25f * static_cast<float>(i % p.channels % 4);
  return x;
}

inline HostTensor channel_values(std::string name, const BatchNormParams& p, std::uint64_t seed,
                                 float lo, float hi) {
  return {std::move(name),
          {p.channels},
          Role::kIn,
          Kind::kF32,
          positive_values(p.channels, seed, lo, hi)};
}

// The ReLU's bits, written by forward training and read by backward: never compared itself.
inline HostTensor mask_scratch(const BatchNormParams& p) {
  const std::int64_t words = p.activation == backend::Activation::kRelu ? p.mask_words() : 1;
  return {"relu_mask",
          {words},
          Role::kScratch,
          Kind::kI32,
          std::vector<float>(static_cast<std::size_t>(words), 0.0f)};
}

// The sums of x and x^2 per channel (f32 [2, channels]) as a convolution with statistics
// hands them over, from x as the case made it (in double, rounded once).
inline HostTensor statistics_of(const HostTensor& x, std::string name = "statistics") {
  const std::int64_t channels = x.shape[1];
  Vec sums(static_cast<std::size_t>(2 * channels), 0.0);
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    const std::size_t c = i % static_cast<std::size_t>(channels);
    sums[c] += x.data[i];
    sums[static_cast<std::size_t>(channels) + c] += double(x.data[i]) * x.data[i];
  }
  return {std::move(name),
          {2, channels},
          Role::kIn,
          Kind::kF32,
          std::vector<float>(sums.begin(), sums.end())};
}

}  // namespace dlbench::op_harness::batch_norm_inputs
