#include "tests/gpu/cuda_test_util.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace dlbench::gpu_test {

void round_in_place(DType dtype, HostTensor& t) {
  for (float& v : t.data) v = round_to(dtype, v);
}

std::vector<Precision> float_precisions() {
  return {kF32, kF16, kBf16};
}
std::string precision_name(const ::testing::TestParamInfo<Precision>& info) {
  return info.param.name;
}

// --- device tensors --------------------------------------------------------------------------

GpuTensor::GpuTensor(backend::cuda::CudaBackend& be, Shape shape, DType dtype)
    : be_(&be),
      buffer_(be.allocator(), static_cast<std::size_t>(shape.numel()) * size_of(dtype)),
      view_(buffer_.data(), shape, dtype, be.device()) {}

void GpuTensor::upload(const std::vector<float>& host) {
  const std::size_t n = host.size();
  switch (view_.dtype()) {
    case DType::kF32:
      be_->from_host(host.data(), view_);
      return;
    case DType::kF16:
    case DType::kBF16: {
      std::vector<std::uint16_t> bits(n);
      for (std::size_t i = 0; i < n; ++i)
        bits[i] = view_.dtype() == DType::kF16 ? op_harness::f32_to_f16_bits(host[i])
                                               : op_harness::f32_to_bf16_bits(host[i]);
      be_->from_host(bits.data(), view_);
      return;
    }
    case DType::kI32: {
      std::vector<std::int32_t> v(host.begin(), host.end());
      be_->from_host(v.data(), view_);
      return;
    }
    case DType::kI64: {
      std::vector<std::int64_t> v(host.begin(), host.end());
      be_->from_host(v.data(), view_);
      return;
    }
  }
}

std::vector<float> GpuTensor::download() const {
  const auto n = static_cast<std::size_t>(view_.numel());
  std::vector<float> out(n);
  switch (view_.dtype()) {
    case DType::kF32:
      be_->to_host(view_, out.data());
      break;
    case DType::kF16:
    case DType::kBF16: {
      std::vector<std::uint16_t> bits(n);
      be_->to_host(view_, bits.data());
      for (std::size_t i = 0; i < n; ++i)
        out[i] = view_.dtype() == DType::kF16 ? op_harness::f16_bits_to_f32(bits[i])
                                              : op_harness::bf16_bits_to_f32(bits[i]);
      break;
    }
    case DType::kI32: {
      std::vector<std::int32_t> v(n);
      be_->to_host(view_, v.data());
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(v[i]);
      break;
    }
    case DType::kI64: {
      std::vector<std::int64_t> v(n);
      be_->to_host(view_, v.data());
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(v[i]);
      break;
    }
  }
  return out;
}

void GpuTensor::poison() {
  std::vector<unsigned char> bytes(view_.bytes(), 0xFF);
  be_->from_host(bytes.data(), view_);
}

// --- fixture ---------------------------------------------------------------------------------

void GpuOpTest::SetUp() {
  if (!gpu_available()) GTEST_SKIP() << "no GPU (cudaGetDeviceCount failed or found none)";
  gpu_ = std::make_unique<backend::cuda::CudaBackend>(0);
}

GpuTensor GpuOpTest::upload(const HostTensor& host, DType dtype) {
  GpuTensor t(*gpu_, host.shape, dtype);
  t.upload(host.data);
  return t;
}

GpuTensor GpuOpTest::poisoned(Shape shape, DType dtype) {
  GpuTensor t(*gpu_, shape, dtype);
  t.poison();
  return t;
}

}  // namespace dlbench::gpu_test
