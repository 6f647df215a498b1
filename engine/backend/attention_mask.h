// Which keys a query sees in Backend::attention_forward, one formula for the CPU backend and the
// CUDA kernels: query i of a sample sees keys [0, visible_keys(...)), none when i lies past the
// sample's query length, and at most i + 1 under a causal mask. Lengths are clamped to [0, seq]
// (the CPU's door refuses others before this is asked; CUDA cannot read them there).
#pragma once

#include <cstdint>

#include "engine/core/host_device.h"

namespace dlbench::backend {

DLBENCH_HOST_DEVICE inline std::int64_t clamp_length(const std::int32_t* lengths, std::int64_t n,
                                                     std::int64_t seq) {
  if (lengths == nullptr) return seq;
  const std::int64_t length = lengths[n];
  return length < 0 ? 0 : (length > seq ? seq : length);
}

// q_length and kv_length already clamped.
DLBENCH_HOST_DEVICE inline std::int64_t visible_keys(std::int64_t i, std::int64_t q_length,
                                                     std::int64_t kv_length, bool causal) {
  if (i >= q_length) return 0;
  return causal && i + 1 < kv_length ? i + 1 : kv_length;
}

}  // namespace dlbench::backend
