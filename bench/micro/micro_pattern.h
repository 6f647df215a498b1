// The data the micro-benchmarks fill their buffers with, as pure functions of an element's
// index that the host and the device compute alike, so a check needs no copy of the inputs.
//
// Two kinds: a random-looking value (what is timed: full mantissas draw the power real data
// draws, where zeros or small integers would let the clocks rise), and a small whole number
// (what is checked: every format from fp8 e4m3 to fp64 holds -2..2 exactly, products and sums
// of them stay whole, so a reference product is exact and a wrong entry cannot hide in
// rounding).
#pragma once

#include <cstdint>

#include "engine/core/host_device.h"

namespace dlbench::micro {

// SplitMix64's finalizer: a well-mixed 64-bit hash of the index and seed.
DLBENCH_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1).
DLBENCH_HOST_DEVICE inline float random_value(std::uint64_t index, std::uint64_t seed) {
  const std::uint64_t h = mix64(index ^ mix64(seed));
  return static_cast<float>(static_cast<double>(h >> 40) * (1.0 / 8388608.0) - 1.0);
}

// A whole number in [-2, 2].
DLBENCH_HOST_DEVICE inline int small_whole(std::uint64_t index, std::uint64_t seed) {
  return static_cast<int>(mix64(index ^ mix64(seed)) % 5) - 2;
}

// The output entries a product check samples: both corners, then scattered ones.
struct SampledEntry {
  std::int64_t row = 0, col = 0;
};
inline SampledEntry sampled_entry(int sample, std::int64_t rows, std::int64_t cols,
                                  std::uint64_t seed) {
  if (sample == 0) return {0, 0};
  if (sample == 1) return {rows - 1, cols - 1};
  const std::uint64_t h = mix64(static_cast<std::uint64_t>(sample) ^ mix64(seed + 7));
  return {static_cast<std::int64_t>(h % static_cast<std::uint64_t>(rows)),
          static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(cols))};
}

// The bandwidth and transfer benchmarks' words: exact in f32 (below 2^24) and easy to recompute.
DLBENCH_HOST_DEVICE inline float copy_value(std::uint64_t index) {
  return static_cast<float>(index % 1021);
}
DLBENCH_HOST_DEVICE inline float triad_b(std::uint64_t index) {
  return static_cast<float>(index % 997);
}
DLBENCH_HOST_DEVICE inline float triad_c(std::uint64_t index) {
  return static_cast<float>(index % 991);
}
constexpr float kTriadScalar = 3.0f;  // a = b + 3c stays a whole number below 2^24: exact
DLBENCH_HOST_DEVICE inline std::uint32_t transfer_word(std::uint64_t index) {
  return static_cast<std::uint32_t>(mix64(index));
}

}  // namespace dlbench::micro
