// Constant fills and deterministic random numbers, the same values as the CPU backend.
//
// The generator is the CPU backend's counter-based one (cpu_fill.cc): element i of a fill with
// seed s is a pure function of (s, i), splitmix64 of the counter, so a GPU thread computes it
// on its own and CPU and GPU runs start from the same weights and data.
//   normal:  u1, u2 = uniform (0, 1] from counters 2i and 2i + 1 (53 bits each);
//            z = sqrt(-2 ln u1) cos(2 pi u2);  value = float(mean + stddev z)   (in double)
//   uniform: value = float(low + (high - low) u), u uniform (0, 1] from counter i
//   integer: value = low + bits(i) mod (high - low)
// The double arithmetic is rounded one operation at a time (__dmul_rn/__dadd_rn), as the CPU
// computes it; log, sqrt and cos are CUDA's double functions (within an ulp or two of the C
// library's), so after rounding to float the values agree exactly except, with a probability
// of about 2^-29 per element, where the double lies on a float rounding boundary.
// f16/bf16 destinations get the f32 value rounded to nearest even.
#include <cstdint>

#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/core/splitmix64.h"

namespace dlbench::backend::cuda {
namespace {

__device__ __forceinline__ double uniform_open0(std::uint64_t bits) {
  return __dmul_rn(static_cast<double>(bits >> 11) + 1.0, 1.0 / 9007199254740992.0);
}

constexpr double kTwoPi = 2.0 * 3.14159265358979323846;

template <class T>
__global__ void fill_normal_kernel(T* out, std::int64_t n, double mean, double stddev,
                                   std::uint64_t mixed_seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const auto c = static_cast<std::uint64_t>(i) * 2;
    const double u1 = uniform_open0(splitmix64(mixed_seed ^ c));
    const double u2 = uniform_open0(splitmix64(mixed_seed ^ (c + 1)));
    const double z = __dmul_rn(sqrt(__dmul_rn(-2.0, log(u1))), cos(__dmul_rn(kTwoPi, u2)));
    out[i] = from_f32<T>(static_cast<float>(__dadd_rn(mean, __dmul_rn(stddev, z))));
  }
}

template <class T>
__global__ void fill_uniform_kernel(T* out, std::int64_t n, double low, double range,
                                    std::uint64_t mixed_seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double u = uniform_open0(splitmix64(mixed_seed ^ static_cast<std::uint64_t>(i)));
    out[i] = from_f32<T>(static_cast<float>(__dadd_rn(low, __dmul_rn(range, u))));
  }
}

template <class T>
__device__ __forceinline__ T from_i64(std::int64_t v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return from_f32<T>(static_cast<float>(v));
  }
}

template <class T>
__global__ void fill_uniform_int_kernel(T* out, std::int64_t n, std::int64_t low,
                                        std::uint64_t range, std::uint64_t mixed_seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::uint64_t bits = splitmix64(mixed_seed ^ static_cast<std::uint64_t>(i));
    out[i] = from_i64<T>(low + static_cast<std::int64_t>(bits % range));
  }
}

template <class T>
__global__ void fill_kernel(T* out, std::int64_t n, T value) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = value;
}

// The seed's stream, as cpu_fill.cc: counter i -> splitmix64(splitmix64(seed) ^ i); the outer
// mix of the seed is the same for every element, so it is computed once here.
template <class F>
void dispatch_any(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kI32:
      return f(TypeTag<std::int32_t>{});
    case DType::kI64:
      return f(TypeTag<std::int64_t>{});
    default:
      return dispatch_float(dtype, "fill", f);
  }
}

}  // namespace

void CudaBackend::fill_impl(const Tensor& t, float value) {
  activate();
  require_here(t, "fill", "t");
  const std::int64_t n = t.numel();
  if (n == 0) return;
  dispatch_any(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v{};
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(value);
    } else if constexpr (std::is_same_v<T, float>) {
      v = value;
    } else if constexpr (std::is_same_v<T, __half>) {
      v = __float2half_rn(value);
    } else {
      v = __float2bfloat16_rn(value);
    }
    fill_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(static_cast<T*>(t.data()), n, v);
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::fill_normal_impl(const Tensor& t, float mean, float stddev, std::uint64_t seed) {
  activate();
  require_here(t, "fill_normal", "t");
  const std::int64_t n = t.numel();
  if (n == 0) return;
  dispatch_float(t.dtype(), "fill_normal", [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_normal_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(static_cast<T*>(t.data()), n, mean,
                                                               stddev, splitmix64(seed));
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::fill_uniform_impl(const Tensor& t, float low, float high, std::uint64_t seed) {
  activate();
  require_here(t, "fill_uniform", "t");
  const std::int64_t n = t.numel();
  if (n == 0) return;
  const double range = static_cast<double>(high) - low;  // as the CPU computes it
  dispatch_float(t.dtype(), "fill_uniform", [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_uniform_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(static_cast<T*>(t.data()), n, low,
                                                                range, splitmix64(seed));
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::fill_uniform_int_impl(const Tensor& t, std::int64_t low,
                                        std::int64_t high_exclusive, std::uint64_t seed) {
  activate();
  require_here(t, "fill_uniform_int", "t");
  const std::int64_t n = t.numel();
  if (n == 0) return;
  const auto range = static_cast<std::uint64_t>(high_exclusive - low);
  dispatch_any(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_uniform_int_kernel<T><<<grid_for(n), kBlock, 0, stream_>>>(static_cast<T*>(t.data()), n,
                                                                    low, range, splitmix64(seed));
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
