// The micro-benchmarks' own CUDA kernels (micro_kernels.cu): fills with the patterns of
// micro_pattern.h, the copy and triad of the bandwidth benchmark, and checks that count wrong
// elements on the device. Launchers take a stream, launch, and check the launch.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace dlbench::micro::kernels {

// Element types of a matrix product's inputs.
enum class Element { kF64, kF32, kF16, kBf16, kE4m3, kI8 };
std::size_t element_size(Element e);

enum class Fill {
  kRandom,  // random_value: uniform in [-1, 1) (int8: -127..127)
  kWhole,   // small_whole: -2..2
};
// data[i] = the pattern's value of index i with this seed, converted to the element type.
void fill_matrix(void* data, std::int64_t count, Element element, Fill fill, std::uint64_t seed,
                 cudaStream_t stream);

// The bandwidth benchmark: the copy source (copy_value), the triad's b and c, the kernels.
// copy and triad move float4s where the pointers and count allow (cudaMalloc aligns to 256).
void fill_copy_source(float* data, std::int64_t count, cudaStream_t stream);
void fill_triad_inputs(float* b, float* c, std::int64_t count, cudaStream_t stream);
void copy(const float* src, float* dst, std::int64_t count, cudaStream_t stream);
// a = b + scalar c
void triad(float* a, const float* b, const float* c, float scalar, std::int64_t count,
           cudaStream_t stream);

// Transfers: transfer_word(i).
void fill_words(std::uint32_t* data, std::int64_t count, cudaStream_t stream);

// What a checked buffer should hold.
enum class Expect { kCopy, kTriad, kWords };
// Adds to *wrong (device memory) the number of elements of data that differ from what
// `expect` says element i holds (floats for kCopy and kTriad, 32-bit words for kWords).
void count_wrong(const void* data, std::int64_t count, Expect expect, unsigned long long* wrong,
                 cudaStream_t stream);

}  // namespace dlbench::micro::kernels
