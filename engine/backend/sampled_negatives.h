// The negatives Backend::sample_negatives draws, one formula for the CPU backend and CUDA
// kernels: negative j of the call that advanced the step counter to `step` is
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

}  // namespace dlbench::backend
