// Fills, copies and checks for the micro-benchmarks. Every kernel runs one element (or one
// float4) per thread over a 1-D grid of 256-thread blocks, indices in 64 bits: the buffers
// reach gigabytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "bench/micro/micro_kernels.h"
#include "bench/micro/micro_pattern.h"
#include "engine/backend/cuda/cuda_check.h"

namespace dlbench::micro::kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>((count + kThreads - 1) / kThreads);
}

template <class T>
__device__ T convert(float v);
template <>
__device__ double convert<double>(float v) {
  return v;
}
template <>
__device__ float convert<float>(float v) {
  return v;
}
template <>
__device__ __half convert<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 convert<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ std::int8_t convert<std::int8_t>(float v) {
  return static_cast<std::int8_t>(v);
}

template <class T>
__global__ void fill_matrix_kernel(T* data, std::int64_t count, bool whole, bool int8,
                                   std::uint64_t seed) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  float v =
      whole ? float(small_whole(std::uint64_t(i), seed)) : random_value(std::uint64_t(i), seed);
  if (int8 && !whole) v = rintf(v * 127.0f);
  data[i] = convert<T>(v);
}

template <class T>
void launch_fill(void* data, std::int64_t count, Fill fill, bool int8, std::uint64_t seed,
                 cudaStream_t stream) {
  if (count == 0) return;
  fill_matrix_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
      static_cast<T*>(data), count, fill == Fill::kWhole, int8, seed);
  CUDA_CHECK_LAUNCH();
}

__global__ void fill_copy_kernel(float* data, std::int64_t count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) data[i] = copy_value(std::uint64_t(i));
}
__global__ void fill_triad_kernel(float* b, float* c, std::int64_t count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  b[i] = triad_b(std::uint64_t(i));
  c[i] = triad_c(std::uint64_t(i));
}
__global__ void fill_words_kernel(std::uint32_t* data, std::int64_t count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) data[i] = transfer_word(std::uint64_t(i));
}

__global__ void copy4_kernel(const float4* __restrict__ src, float4* __restrict__ dst,
                             std::int64_t count4) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count4) dst[i] = src[i];
}
__global__ void copy1_kernel(const float* __restrict__ src, float* __restrict__ dst,
                             std::int64_t count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = src[i];
}
__global__ void triad4_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                              const float4* __restrict__ c, float s, std::int64_t count4) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count4) return;
  const float4 x = b[i], y = c[i];
  a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
}
__global__ void triad1_kernel(float* __restrict__ a, const float* __restrict__ b,
                              const float* __restrict__ c, float s, std::int64_t count) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) a[i] = b[i] + s * c[i];
}

__global__ void count_wrong_kernel(const void* data, std::int64_t count, Expect expect,
                                   unsigned long long* wrong) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool bad = false;
  if (i < count) {
    const std::uint64_t u = std::uint64_t(i);
    if (expect == Expect::kWords)
      bad = static_cast<const std::uint32_t*>(data)[i] != transfer_word(u);
    else {
      const float want =
          expect == Expect::kCopy ? copy_value(u) : triad_b(u) + kTriadScalar * triad_c(u);
      bad = !(static_cast<const float*>(data)[i] == want);
    }
  }
  // One atomic per warp that saw a wrong element, not per element.
  const unsigned ballot = __ballot_sync(0xffffffffu, bad);
  if (ballot != 0 && (threadIdx.x % 32) == 0) atomicAdd(wrong, __popc(ballot));
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

std::size_t element_size(Element e) {
  switch (e) {
    case Element::kF64:
      return 8;
    case Element::kF32:
      return 4;
    case Element::kF16:
    case Element::kBf16:
      return 2;
    case Element::kE4m3:
    case Element::kI8:
      return 1;
  }
  return 1;
}

void fill_matrix(void* data, std::int64_t count, Element element, Fill fill, std::uint64_t seed,
                 cudaStream_t stream) {
  switch (element) {
    case Element::kF64:
      return launch_fill<double>(data, count, fill, false, seed, stream);
    case Element::kF32:
      return launch_fill<float>(data, count, fill, false, seed, stream);
    case Element::kF16:
      return launch_fill<__half>(data, count, fill, false, seed, stream);
    case Element::kBf16:
      return launch_fill<__nv_bfloat16>(data, count, fill, false, seed, stream);
    case Element::kE4m3:
      return launch_fill<__nv_fp8_e4m3>(data, count, fill, false, seed, stream);
    case Element::kI8:
      return launch_fill<std::int8_t>(data, count, fill, true, seed, stream);
  }
}

void fill_copy_source(float* data, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_copy_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  CUDA_CHECK_LAUNCH();
}

void fill_triad_inputs(float* b, float* c, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_triad_kernel<<<blocks_for(count), kThreads, 0, stream>>>(b, c, count);
  CUDA_CHECK_LAUNCH();
}

void fill_words(std::uint32_t* data, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_words_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  CUDA_CHECK_LAUNCH();
}

void copy(const float* src, float* dst, std::int64_t count, cudaStream_t stream) {
  std::int64_t done = 0;
  if (aligned16(src) && aligned16(dst) && count >= 4) {
    const std::int64_t count4 = count / 4;
    copy4_kernel<<<blocks_for(count4), kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst), count4);
    CUDA_CHECK_LAUNCH();
    done = count4 * 4;
  }
  if (done < count) {
    copy1_kernel<<<blocks_for(count - done), kThreads, 0, stream>>>(src + done, dst + done,
                                                                    count - done);
    CUDA_CHECK_LAUNCH();
  }
}

void triad(float* a, const float* b, const float* c, float scalar, std::int64_t count,
           cudaStream_t stream) {
  std::int64_t done = 0;
  if (aligned16(a) && aligned16(b) && aligned16(c) && count >= 4) {
    const std::int64_t count4 = count / 4;
    triad4_kernel<<<blocks_for(count4), kThreads, 0, stream>>>(
        reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
        reinterpret_cast<const float4*>(c), scalar, count4);
    CUDA_CHECK_LAUNCH();
    done = count4 * 4;
  }
  if (done < count) {
    triad1_kernel<<<blocks_for(count - done), kThreads, 0, stream>>>(a + done, b + done, c + done,
                                                                     scalar, count - done);
    CUDA_CHECK_LAUNCH();
  }
}

void count_wrong(const void* data, std::int64_t count, Expect expect, unsigned long long* wrong,
                 cudaStream_t stream) {
  if (count == 0) return;
  count_wrong_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, expect, wrong);
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::micro::kernels
