// Fills, copies, host transfers and deterministic random numbers.
//
// Random numbers come from a counter-based generator: element i of a fill with seed s is a
// pure function of (s, i) (splitmix64 of the counter), so the result does not depend on the
// thread count or on how the loop is split, and any device can reproduce it.
#include <cmath>
#include <cstring>
#include <numbers>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/splitmix64.h"

namespace dlbench::backend::cpu {
namespace {

// The stream of one seed: counter i -> 64 random bits.
std::uint64_t random_bits(std::uint64_t seed, std::uint64_t counter) {
  return splitmix64(splitmix64(seed) ^ counter);
}

// A uniform double in (0, 1]: 53 random bits, shifted off zero so log() is finite.
double uniform_open0(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

}  // namespace

void CpuBackend::fill_impl(const Tensor& t, float value) {
  require_cpu(t, "fill", "t");
  const std::int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::kF32: {
      float* p = t.data_as<float>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = value;
      return;
    }
    case DType::kI32: {
      auto* p = t.data_as<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int32_t>(value);
      return;
    }
    case DType::kI64: {
      auto* p = t.data_as<std::int64_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(value);
      return;
    }
    default:
      require_f32(t, "fill", "t");  // throws: f16/bf16 have no CPU support
  }
}

void CpuBackend::copy_impl(const Tensor& src, const Tensor& dst) {
  require_cpu(src, "copy", "src");
  require_cpu(dst, "copy", "dst");
  if (src.bytes() > 0) std::memmove(dst.data(), src.data(), src.bytes());
}

void CpuBackend::to_host_impl(const Tensor& src, void* host) {
  require_cpu(src, "to_host", "src");
  if (src.bytes() > 0) std::memcpy(host, src.data(), src.bytes());
}

void CpuBackend::from_host_impl(const void* host, const Tensor& dst) {
  require_cpu(dst, "from_host", "dst");
  if (dst.bytes() > 0) std::memcpy(dst.data(), host, dst.bytes());
}

void CpuBackend::fill_normal_impl(const Tensor& t, float mean, float stddev, std::uint64_t seed) {
  require_f32(t, "fill_normal", "t");
  float* p = t.data_as<float>();
  const std::int64_t n = t.numel();
  // Box-Muller: two independent uniforms u1, u2 give sqrt(-2 ln u1) cos(2 pi u2) ~ N(0, 1).
  // Each element draws its own pair (counters 2i and 2i+1) and keeps the cosine branch only,
  // trading half the work for independence from how elements are grouped.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::uint64_t>(i) * 2;
    const double u1 = uniform_open0(random_bits(seed, c));
    const double u2 = uniform_open0(random_bits(seed, c + 1));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    p[i] = static_cast<float>(mean + stddev * z);
  }
}

void CpuBackend::fill_uniform_impl(const Tensor& t, float low, float high, std::uint64_t seed) {
  require_f32(t, "fill_uniform", "t");
  float* p = t.data_as<float>();
  const std::int64_t n = t.numel();
  const double range = static_cast<double>(high) - low;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = uniform_open0(random_bits(seed, static_cast<std::uint64_t>(i)));
    p[i] = static_cast<float>(low + range * u);
  }
}

void CpuBackend::fill_uniform_int_impl(const Tensor& t, std::int64_t low,
                                       std::int64_t high_exclusive, std::uint64_t seed) {
  require_cpu(t, "fill_uniform_int", "t");
  const std::int64_t n = t.numel();
  const auto range = static_cast<std::uint64_t>(high_exclusive - low);
  // The modulo bias is at most range / 2^64: invisible for label and index ranges.
  auto value = [&](std::int64_t i) {
    return low +
           static_cast<std::int64_t>(random_bits(seed, static_cast<std::uint64_t>(i)) % range);
  };
  switch (t.dtype()) {
    case DType::kI32: {
      auto* p = t.data_as<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int32_t>(value(i));
      return;
    }
    case DType::kI64: {
      auto* p = t.data_as<std::int64_t>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = value(i);
      return;
    }
    case DType::kF32: {
      float* p = t.data_as<float>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(value(i));
      return;
    }
    default:
      require_f32(t, "fill_uniform_int", "t");  // throws: f16/bf16 have no CPU support
  }
}

}  // namespace dlbench::backend::cpu
