// Host tensors of the op harness: the values a case gives an op, made on the host in f32 and
// rounded to the precision under test, so every backend (and the float64 reference) sees the
// same numbers; random data that is never zero and never constant; outputs poisoned with NaN
// bytes before every run; the tolerance check of the form atol + rtol * |ref| that prints the
// first mismatching indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/backend/op_params.h"
#include "engine/core/dtype.h"
#include "engine/core/shape.h"

namespace dlbench::op_harness {

using Vec = std::vector<double>;
using backend::GradMode;
using backend::MathMode;

// How a case runs: the dtype of activations, weights and gradients, and the fp32 math mode.
struct Precision {
  DType dtype;
  MathMode math;
  const char* name;
};
extern const Precision kF32;
extern const Precision kTf32;
extern const Precision kF16;
extern const Precision kBf16;

// What a tensor is to the op: read only, written (poisoned before the run, compared after),
// read and written (its starting values matter and the result is compared), or scratch.
enum class Role { kIn, kOut, kInOut, kScratch };
// Its dtype: the precision's (activations, weights, gradients), always f32 (batch-norm
// statistics, losses, optimizer buffers) or i32 (labels, ids).
enum class Kind { kCompute, kF32, kI32 };

struct HostTensor {
  std::string name;
  Shape shape;
  Role role = Role::kIn;
  Kind kind = Kind::kCompute;
  std::vector<float> data;  // i32 tensors hold exact small integers
  Vec as_double() const { return Vec(data.begin(), data.end()); }
};

// Values with magnitude in [0.1, 1] and random sign: no zeros (which hide missing terms) and
// no constant tensors (which hide indexing bugs). Deterministic per seed.
std::vector<float> random_values(std::int64_t count, std::uint64_t seed);
// Magnitudes in [lo, hi], positive (variances, scales).
std::vector<float> positive_values(std::int64_t count, std::uint64_t seed, float lo, float hi);
HostTensor input(std::string name, Shape shape, std::uint64_t seed, Kind kind = Kind::kCompute);
// Poisoned before the run: every element NaN, so an element the op forgets fails.
HostTensor output(std::string name, Shape shape, Kind kind = Kind::kCompute);
// An i32 input [values.size()] holding exactly these values (labels, ids).
HostTensor i32_input(std::string name, const std::vector<std::int32_t>& values);
// A gradient output under a GradMode: random starting values to accumulate into (kInOut), or
// poisoned (kOut) when the op overwrites.
HostTensor grad_output(std::string name, Shape shape, GradMode mode, std::uint64_t seed);
const char* mode_name(GradMode mode);
// The expected gradient output: the previous contents plus the gradient when accumulating.
Vec expected_grad(GradMode mode, const HostTensor& before, const Vec& grad);

// Host round-to-nearest-even conversions, independent of CUDA's.
std::uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(std::uint16_t b);
float round_to(DType dtype, float f);  // f rounded to dtype and back (identity for f32)
DType dtype_of(const HostTensor& t, const Precision& p);

// |got - ref| <= atol + rtol * |ref| elementwise; NaN fails.
struct Tolerance {
  double atol;
  double rtol;
};
// f32 elementwise math: a few ulps of the result.
constexpr Tolerance kElementwise{1e-6, 1e-5};
// A float32 sum of `terms` products of inputs with magnitude <= 1 and random sign: each of the
// K additions rounds with error <= 2^-24 |partial sum|, partial sums stay around sqrt(K), and
// the K rounding errors add like a random walk, so the total is about K * 2^-24 (atol; the
// worst case K * 2^-24 * sum|terms| is far looser). rtol 1e-4 covers large sums whose order
// differs between oneDNN's blocked kernels and the reference.
Tolerance sum_tolerance(std::int64_t terms);
// A backend against the CPU backend, for a value that is a sum of `terms` products of inputs
// with magnitude <= 1, at a precision: f32 rounds each addition (2^-24) and the errors add like
// a random walk, bounded by terms * 2^-24 on both sides; tf32 rounds inputs to 10 mantissa
// bits, so each product is off by up to 2^-10 of itself and the sum by about sqrt(terms)
// 2^-10; f16/bf16 inputs are the same on both sides, so only the output rounding (2^-11 /
// 2^-8 relative) and partial sums kept in the low precision by some kernels (split
// reductions) remain.
Tolerance sum_tolerance(const Precision& p, std::int64_t terms, double magnitude = 1.0);

::testing::AssertionResult all_close(const std::string& what, const std::vector<float>& got,
                                     const Vec& ref, Tolerance tol);
::testing::AssertionResult all_close(const std::string& what, const Vec& got, const Vec& ref,
                                     Tolerance tol);
// As all_close, and prints the largest error as a share of what was allowed, for passing
// comparisons too: it shows how much room each tolerance leaves.
::testing::AssertionResult close_reporting(const std::string& what, const std::vector<float>& got,
                                           const std::vector<float>& ref, Tolerance tol);

}  // namespace dlbench::op_harness
