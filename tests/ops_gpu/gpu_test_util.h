// Shared pieces of the CUDA op tests: each op runs on the CUDA backend and on the CPU backend
// (the reference) in the same process, on the same random inputs, and the outputs are
// compared elementwise with |gpu - cpu| <= atol + rtol |cpu| (NaN never passes).
//
// Low precision: inputs are made in f32, rounded to f16/bf16 on the host, and the rounded
// values are what both backends see (the CPU computes on them in f32), so the comparison
// measures the GPU's arithmetic, not the input rounding. GPU outputs are filled with NaN bytes
// before every op, so an element it forgets to write fails.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::gpu_test {

using backend::GradMode;
using backend::MathMode;
using ops_test::HostTensor;
using ops_test::Tolerance;

// Host round-to-nearest-even conversions, independent of CUDA's, for the references.
std::uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(std::uint16_t b);
// f rounded to dtype and back (identity for f32).
float round_to(DType dtype, float f);
void round_in_place(DType dtype, HostTensor& t);

// How a test runs: the dtype of activations/weights/gradients and the fp32 math mode.
struct Precision {
  DType dtype;
  MathMode math;
  const char* name;
};
extern const Precision kF32;
extern const Precision kTf32;
extern const Precision kF16;
extern const Precision kBf16;
std::vector<Precision> all_precisions();    // f32, tf32, f16, bf16
std::vector<Precision> float_precisions();  // f32, f16, bf16 (where math mode does not matter)
std::string precision_name(const ::testing::TestParamInfo<Precision>& info);
inline void PrintTo(const Precision& p, std::ostream* os) {
  *os << p.name;
}

// Tolerance of a value that is a sum of `terms` products of inputs with magnitude <= 1, at a
// precision: f32 rounds each addition (2^-24) and the errors add like a random walk, bounded
// by terms * 2^-24 on both sides; tf32 rounds inputs to 10 mantissa bits, so each product is
// off by up to 2^-10 of itself and the sum by about sqrt(terms) 2^-10; f16/bf16 inputs are
// the same on both sides, so only the output rounding (2^-11 / 2^-8 relative) and partial
// sums kept in the low precision by some kernels (split reductions) remain.
Tolerance sum_tolerance(const Precision& p, std::int64_t terms, double magnitude = 1.0);

// A device tensor of the CUDA backend with its own memory.
class GpuTensor {
 public:
  GpuTensor(backend::cuda::CudaBackend& be, Shape shape, DType dtype);
  Tensor tensor() const { return view_; }
  // Host f32 values converted to the tensor's dtype (round to nearest even) and uploaded.
  void upload(const std::vector<float>& host);
  // The tensor's values converted to f32.
  std::vector<float> download() const;
  // Every byte 0xFF: NaN in f32, f16 and bf16.
  void poison();

 private:
  backend::cuda::CudaBackend* be_;
  Buffer buffer_;
  Tensor view_;
};

// The backends of one test. GPU tests skip when there is no usable GPU.
class GpuOpTest : public ::testing::Test {
 protected:
  void SetUp() override;
  backend::cuda::CudaBackend& gpu() { return *gpu_; }
  backend::cpu::CpuBackend& cpu() { return cpu_; }
  // A GPU copy of host data (already rounded to dtype by the caller).
  GpuTensor upload(const HostTensor& host, DType dtype);
  GpuTensor poisoned(Shape shape, DType dtype);

 private:
  std::unique_ptr<backend::cuda::CudaBackend> gpu_;
  backend::cpu::CpuBackend cpu_;
};

template <class Param>
class GpuOpTestP : public GpuOpTest, public ::testing::WithParamInterface<Param> {};

bool gpu_available();

// Compare a GPU output with the CPU's; prints the first mismatching indices.
::testing::AssertionResult gpu_close(const std::string& what, const std::vector<float>& gpu,
                                     const std::vector<float>& cpu, Tolerance tol);

}  // namespace dlbench::gpu_test
