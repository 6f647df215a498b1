#include "tests/ops_gpu/gpu_test_util.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace dlbench::gpu_test {

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

void round_in_place(DType dtype, HostTensor& t) {
  for (float& v : t.data) v = round_to(dtype, v);
}

const Precision kF32{DType::kF32, MathMode::kStrict, "f32"};
const Precision kTf32{DType::kF32, MathMode::kTf32, "tf32"};
const Precision kF16{DType::kF16, MathMode::kStrict, "f16"};
const Precision kBf16{DType::kBF16, MathMode::kStrict, "bf16"};

std::vector<Precision> all_precisions() {
  return {kF32, kTf32, kF16, kBf16};
}
std::vector<Precision> float_precisions() {
  return {kF32, kF16, kBf16};
}
std::string precision_name(const ::testing::TestParamInfo<Precision>& info) {
  return info.param.name;
}

Tolerance sum_tolerance(const Precision& p, std::int64_t terms, double magnitude) {
  const double k = static_cast<double>(std::max<std::int64_t>(terms, 1));
  if (p.dtype == DType::kF32 && p.math == MathMode::kStrict)
    return {2.0 * std::ldexp(1.0, -24) * std::max(k, 16.0) * magnitude, 1e-5};
  if (p.dtype == DType::kF32) return {2.0 * std::ldexp(1.0, -10) * std::sqrt(k) * magnitude, 1e-3};
  if (p.dtype == DType::kF16) return {std::ldexp(1.0, -10) * std::sqrt(k) * magnitude, 1e-2};
  return {std::ldexp(1.0, -7) * std::sqrt(k) * magnitude, 1e-2};
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
        bits[i] =
            view_.dtype() == DType::kF16 ? f32_to_f16_bits(host[i]) : f32_to_bf16_bits(host[i]);
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
        out[i] =
            view_.dtype() == DType::kF16 ? f16_bits_to_f32(bits[i]) : bf16_bits_to_f32(bits[i]);
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

bool gpu_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

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

::testing::AssertionResult gpu_close(const std::string& what, const std::vector<float>& gpu,
                                     const std::vector<float>& cpu, Tolerance tol) {
  // The largest error as a share of what was allowed, printed for passing comparisons too:
  // it shows how much room each tolerance leaves.
  double worst_share = 0, worst_err = 0;
  for (std::size_t i = 0; i < gpu.size() && i < cpu.size(); ++i) {
    const double err = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    const double share = err / (tol.atol + tol.rtol * std::fabs(static_cast<double>(cpu[i])));
    if (share > worst_share || std::isnan(share)) worst_share = share, worst_err = err;
  }
  std::printf("  %-40s max |err| %.3g = %.3f of allowed (atol %.2g, rtol %.2g, n %zu)\n",
              what.c_str(), worst_err, worst_share, tol.atol, tol.rtol, cpu.size());
  return ops_test::all_close(what, gpu, ops_test::Vec(cpu.begin(), cpu.end()), tol);
}

}  // namespace dlbench::gpu_test
