// Where Backend::reverse_sequences takes each row from, one formula for the CPU backend and the
// CUDA kernel: step t of a sample of (clamped) length `length` reads step length - 1 - t, and
// the padding after the sample stays where it is.
#pragma once

#include <cstdint>

#include "engine/core/host_device.h"

namespace dlbench::backend {

DLBENCH_HOST_DEVICE inline std::int64_t reversed_step(std::int64_t t, std::int64_t length) {
  return t < length ? length - 1 - t : t;
}

}  // namespace dlbench::backend
