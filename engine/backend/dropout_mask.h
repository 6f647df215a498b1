// Which elements dropout keeps, one formula for the CPU backend and CUDA kernels: element i of
// the call that advanced the step counter to `step` is kept when
//   unit_uniform(key, i) >= probability,  key = negatives_key(seed, step)
// (sampled_negatives.h: 24 random bits per element, exact in f32 on every device), a pure
// function of (seed, step, i), so forward and backward, and every backend, agree on the mask.
#pragma once

#include <cstdint>

#include "engine/backend/sampled_negatives.h"
#include "engine/core/host_device.h"

namespace dlbench::backend {

DLBENCH_HOST_DEVICE inline bool dropout_keeps(std::uint64_t key, std::int64_t i,
                                              float probability) {
  return unit_uniform(key, i) >= probability;
}

}  // namespace dlbench::backend
