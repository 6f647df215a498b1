// Which elements dropout keeps, one formula for the CPU backend and CUDA kernels: element i of
// the call that advanced the step counter to `step` is kept when
//   unit_uniform(key, i) >= probability,  key = dropout_key(seed, step)
// (sampled_negatives.h: 24 random bits per element, exact in f32 on every device), a pure
// function of (seed, step, i), so forward and backward, and every backend, agree on the mask.
// The key is the negatives' key mixed with a constant of its own, so a dropout and a sampler
// given the same seed and counter still draw from different streams.
#pragma once

#include <cstdint>

#include "engine/backend/sampled_negatives.h"
#include "engine/core/host_device.h"

namespace dlbench::backend {

DLBENCH_HOST_DEVICE inline std::uint64_t dropout_key(std::uint64_t seed, std::int32_t step) {
  constexpr std::uint64_t kDropoutStream = 0x64726f706f7574ull;  // "dropout"
  return splitmix64(negatives_key(seed, step) ^ kDropoutStream);
}

DLBENCH_HOST_DEVICE inline bool dropout_keeps(std::uint64_t key, std::int64_t i,
                                              float probability) {
  return unit_uniform(key, i) >= probability;
}

}  // namespace dlbench::backend
