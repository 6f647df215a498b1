// The negatives Backend::sample_negatives and sample_candidates draw, one formula for the CPU
// backend and CUDA kernels. NCF's: negative j of the call that advanced the step counter to `step`
// is
//   item = below(splitmix64(key ^ j), items),  key = splitmix64(seed ^ splitmix64(step)),
// a pure function of (seed, step, j), so every backend and every thread count writes the same
// ids, and a step's draws are independent of the last step's.
#pragma once

#include <cstdint>

#include "engine/core/host_device.h"
#include "engine/core/splitmix64.h"

namespace dlbench::backend {

DLBENCH_HOST_DEVICE inline std::uint64_t negatives_key(std::uint64_t seed, std::int32_t step) {
  return splitmix64(seed ^
                    splitmix64(static_cast<std::uint64_t>(static_cast<std::uint32_t>(step))));
}

DLBENCH_HOST_DEVICE inline std::int32_t negative_item(std::uint64_t key, std::int64_t j,
                                                      std::int64_t items) {
  return static_cast<std::int32_t>(
      below(splitmix64(key ^ static_cast<std::uint64_t>(j)), static_cast<std::uint32_t>(items)));
}

// Word2Vec's negatives (Backend::sample_candidates): draw j of the call at `step` is the first
// index v of the table whose cdf[v] exceeds u = (splitmix64(key ^ j) >> 40) / 2^24, a float in
// [0, 1) with 24 random bits (so exact in f32 on every device); past the table's end, its last
// index.
DLBENCH_HOST_DEVICE inline float unit_uniform(std::uint64_t key, std::int64_t j) {
  return static_cast<float>(splitmix64(key ^ static_cast<std::uint64_t>(j)) >> 40) *
         (1.0f / 16777216.0f);
}

DLBENCH_HOST_DEVICE inline std::int32_t table_draw(const float* cdf, std::int64_t size, float u) {
  std::int64_t low = 0, high = size - 1;  // the answer lies in [low, high]
  while (low < high) {
    const std::int64_t mid = low + (high - low) / 2;
    if (cdf[mid] > u)
      high = mid;
    else
      low = mid + 1;
  }
  return static_cast<std::int32_t>(low);
}

}  // namespace dlbench::backend
