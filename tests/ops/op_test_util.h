// Shared pieces of the op tests: host tensors over std::vector, random inputs that are never
// zero and never all equal, NaN poisoning of outputs, and the tolerance check that prints the
// first mismatching indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/backend/backend.h"
#include "engine/core/tensor.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::ops_test {

using ref::Vec;

// An f32 host tensor the CPU backend can use directly (host memory is its device memory).
struct HostTensor {
  std::vector<float> data;
  Shape shape;

  HostTensor() = default;
  explicit HostTensor(Shape s) : data(static_cast<std::size_t>(s.numel())), shape(s) {}
  Tensor tensor() { return Tensor(data.data(), shape, DType::kF32, Device::cpu()); }
  Vec as_double() const { return Vec(data.begin(), data.end()); }
};

// Values with magnitude in [0.1, 1] and random sign: no zeros (which hide missing terms) and
// no constant tensors (which hide indexing bugs). Deterministic per seed.
HostTensor random_tensor(Shape shape, std::uint64_t seed);
// Magnitudes in [lo, hi], positive (variances, scales).
HostTensor random_positive(Shape shape, std::uint64_t seed, float lo, float hi);
// Every element NaN: an output the op forgets to write can never pass.
HostTensor poisoned(Shape shape);

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

::testing::AssertionResult all_close(const std::string& what, const std::vector<float>& got,
                                     const Vec& ref, Tolerance tol);
::testing::AssertionResult all_close(const std::string& what, const Vec& got, const Vec& ref,
                                     Tolerance tol);

// Expected value of a gradient output under a GradMode: the previous contents plus the
// gradient when accumulating, the gradient alone when overwriting.
Vec expected_grad(backend::GradMode mode, const HostTensor& before, const Vec& grad);
// The initial contents of a gradient output: random data to accumulate into, or NaN.
HostTensor initial_grad(backend::GradMode mode, Shape shape, std::uint64_t seed);
const char* mode_name(backend::GradMode mode);

// Round a double vector to f32 and back, so a reference sees exactly the backend's inputs.
Vec round_to_float(const Vec& v);
std::vector<float> to_float(const Vec& v);

}  // namespace dlbench::ops_test
