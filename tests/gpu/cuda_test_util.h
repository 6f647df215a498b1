// Shared pieces of the CUDA backend's own tests (the op results are op harness cases): a
// fixture with the CUDA and CPU backends, skipping without a GPU; device tensors uploaded from
// and read back as f32 in any dtype, and poisoned with NaN bytes; a comparison that prints
// how much of its tolerance each check used.
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
#include "tests/gpu/gpu_available.h"
#include "tests/ops/host_tensor.h"

namespace dlbench::gpu_test {

using backend::GradMode;
using backend::MathMode;
using ops_test::HostTensor;
using ops_test::Tolerance;

using op_harness::kBf16;
using op_harness::kF16;
using op_harness::kF32;
using op_harness::Precision;
using op_harness::round_to;
using op_harness::sum_tolerance;
void round_in_place(DType dtype, HostTensor& t);
std::vector<Precision> float_precisions();  // f32, f16, bf16 (where math mode does not matter)
std::string precision_name(const ::testing::TestParamInfo<Precision>& info);

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

// Compare a GPU output with the CPU's; prints the first mismatching indices.
inline ::testing::AssertionResult gpu_close(const std::string& what, const std::vector<float>& gpu,
                                            const std::vector<float>& cpu, Tolerance tol) {
  return op_harness::close_reporting(what, gpu, cpu, tol);
}

}  // namespace dlbench::gpu_test
