#include "tests/ops/harness/tensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

namespace dlbench::op_harness {

const Precision kF32{DType::kF32, MathMode::kStrict, "f32"};
const Precision kTf32{DType::kF32, MathMode::kTf32, "tf32"};
const Precision kF16{DType::kF16, MathMode::kStrict, "f16"};
const Precision kBf16{DType::kBF16, MathMode::kStrict, "bf16"};

std::vector<float> random_values(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  for (float& x : v) x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

std::vector<float> positive_values(std::int64_t count, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<std::size_t>(count));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : v) x = dist(rng);
  return v;
}

HostTensor input(std::string name, Shape shape, std::uint64_t seed, Kind kind) {
  return {std::move(name), shape, Role::kIn, kind, random_values(shape.numel(), seed)};
}

HostTensor output(std::string name, Shape shape, Kind kind) {
  return {std::move(name), shape, Role::kOut, kind,
          std::vector<float>(static_cast<std::size_t>(shape.numel()),
                             std::numeric_limits<float>::quiet_NaN())};
}

HostTensor i32_input(std::string name, const std::vector<std::int32_t>& values) {
  return {std::move(name),
          {static_cast<std::int64_t>(values.size())},
          Role::kIn,
          Kind::kI32,
          std::vector<float>(values.begin(), values.end())};
}

HostTensor grad_output(std::string name, Shape shape, GradMode mode, std::uint64_t seed) {
  if (mode == GradMode::kOverwrite) return output(std::move(name), shape);
  HostTensor t = input(std::move(name), shape, seed);
  t.role = Role::kInOut;
  return t;
}

const char* mode_name(GradMode mode) {
  return mode == GradMode::kAccumulate ? "accumulate" : "overwrite";
}

Vec expected_grad(GradMode mode, const HostTensor& before, const Vec& grad) {
  if (mode == GradMode::kOverwrite) return grad;
  Vec out(grad.size());
  for (std::size_t i = 0; i < grad.size(); ++i) out[i] = before.data[i] + grad[i];
  return out;
}

std::uint16_t f32_to_f16_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof(x));
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u)  // inf or NaN
    return sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u);
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to infinity
  if (magnitude < 0x38800000u) {                        // below 2^-14: an f16 subnormal
    // Units of 2^-24; the scaling is exact and nearbyint rounds to nearest even.
    const float units = std::fabs(f) * 16777216.0f;
    return sign | static_cast<std::uint16_t>(std::nearbyint(units));
  }
  // Normal: drop 13 mantissa bits rounding to nearest even, then rebias the exponent.
  const std::uint32_t rounded = (magnitude + 0xFFFu + ((magnitude >> 13) & 1u)) >> 13;
  return sign | static_cast<std::uint16_t>(rounded - ((127u - 15u) << 10));
}

float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31)
    bits = sign | 0x7F800000u | (mantissa << 13);
  else
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

std::uint16_t f32_to_bf16_bits(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof(x));
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

float bf16_bits_to_f32(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float round_to(DType dtype, float f) {
  switch (dtype) {
    case DType::kF16:
      return f16_bits_to_f32(f32_to_f16_bits(f));
    case DType::kBF16:
      return bf16_bits_to_f32(f32_to_bf16_bits(f));
    default:
      return f;
  }
}

DType dtype_of(const HostTensor& t, const Precision& p) {
  switch (t.kind) {
    case Kind::kCompute:
      return p.dtype;
    case Kind::kF32:
      return DType::kF32;
    case Kind::kI32:
      return DType::kI32;
  }
  return DType::kF32;
}

Tolerance sum_tolerance(std::int64_t terms) {
  const double unit_roundoff = std::ldexp(1.0, -24);
  return {unit_roundoff * static_cast<double>(std::max<std::int64_t>(terms, 16)), 1e-4};
}

Tolerance sum_tolerance(const Precision& p, std::int64_t terms, double magnitude) {
  const double k = static_cast<double>(std::max<std::int64_t>(terms, 1));
  if (p.dtype == DType::kF32 && p.math == MathMode::kStrict)
    return {2.0 * std::ldexp(1.0, -24) * std::max(k, 16.0) * magnitude, 1e-5};
  if (p.dtype == DType::kF32) return {2.0 * std::ldexp(1.0, -10) * std::sqrt(k) * magnitude, 1e-3};
  if (p.dtype == DType::kF16) return {std::ldexp(1.0, -10) * std::sqrt(k) * magnitude, 1e-2};
  return {std::ldexp(1.0, -7) * std::sqrt(k) * magnitude, 1e-2};
}

namespace {

template <class Got, class Ref>
::testing::AssertionResult compare(const std::string& what, const Got& got, const Ref& ref,
                                   Tolerance tol) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure()
           << what << ": size " << got.size() << " vs reference " << ref.size();
  constexpr int kShown = 5;
  std::ostringstream first;
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    const double err = std::fabs(g - r);
    const double allowed = tol.atol + tol.rtol * std::fabs(r);
    if (!(err <= allowed)) {  // written so that NaN fails
      if (bad < kShown)
        first << "\n  [" << i << "] got " << g << " ref " << r << " |err| " << err << " allowed "
              << allowed;
      ++bad;
      worst = std::isnan(err) ? err : std::max(worst, err);
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": " << bad << " of " << ref.size() << " elements off (atol " << tol.atol
         << ", rtol " << tol.rtol << ", worst |err| " << worst << "); first:" << first.str();
}

}  // namespace

::testing::AssertionResult all_close(const std::string& what, const std::vector<float>& got,
                                     const Vec& ref, Tolerance tol) {
  return compare(what, got, ref, tol);
}

::testing::AssertionResult all_close(const std::string& what, const Vec& got, const Vec& ref,
                                     Tolerance tol) {
  return compare(what, got, ref, tol);
}

::testing::AssertionResult close_reporting(const std::string& what, const std::vector<float>& got,
                                           const std::vector<float>& ref, Tolerance tol) {
  double worst_share = 0, worst_err = 0;
  for (std::size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double share = err / (tol.atol + tol.rtol * std::fabs(static_cast<double>(ref[i])));
    if (share > worst_share || std::isnan(share)) worst_share = share, worst_err = err;
  }
  std::printf("  %-40s max |err| %.3g = %.3f of allowed (atol %.2g, rtol %.2g, n %zu)\n",
              what.c_str(), worst_err, worst_share, tol.atol, tol.rtol, ref.size());
  return compare(what, got, ref, tol);
}

}  // namespace dlbench::op_harness
