// Host f32 tensors for the backend tests that are not op harness cases (door checks, the
// backends' own behaviour): a std::vector the CPU backend uses directly, random values that
// are never zero, NaN poisoning; tolerances and comparisons are the harness's.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/tensor.h"
#include "tests/ops/harness/tensors.h"

namespace dlbench::ops_test {

using op_harness::all_close;
using op_harness::kElementwise;
using op_harness::Tolerance;
using op_harness::Vec;

// An f32 host tensor the CPU backend can use directly (host memory is its device memory).
struct HostTensor {
  std::vector<float> data;
  Shape shape;

  HostTensor() = default;
  explicit HostTensor(Shape s) : data(static_cast<std::size_t>(s.numel())), shape(s) {}
  Tensor tensor() { return Tensor(data.data(), shape, DType::kF32, Device::cpu()); }
  Vec as_double() const { return Vec(data.begin(), data.end()); }
};

// op_harness::random_values and positive_values as tensors.
HostTensor random_tensor(Shape shape, std::uint64_t seed);
HostTensor random_positive(Shape shape, std::uint64_t seed, float lo, float hi);
// Every element NaN: an output the op forgets to write can never pass.
HostTensor poisoned(Shape shape);

}  // namespace dlbench::ops_test
