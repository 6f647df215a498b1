// For the tests of recordings that must notice their backend's scratch moving: an op run outside
// any recording that needs more workspace than the backend holds, so that it reallocates it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"

namespace dlbench::gpu_test {

// A batch norm in inference over more channels than `be`'s workspace has room for (the CUDA
// backend keeps 4 f32 coefficients a channel there). Returns the workspace's bytes before.
inline std::size_t grow_workspace(backend::Backend& be) {
  const std::size_t before = be.workspace_bytes();
  const auto channels = static_cast<std::int64_t>(before / (4 * sizeof(float)) / 64 + 16) * 64;
  Buffer memory(be.allocator(), 6 * static_cast<std::size_t>(channels) * sizeof(float));
  auto part = [&](std::int64_t i, Shape shape) {
    return Tensor(static_cast<float*>(memory.data()) + i * channels, shape, DType::kF32,
                  be.device());
  };
  be.fill(part(0, {6 * channels}), 1.0f);
  backend::BatchNormParams p;
  p.channels = channels;
  be.batch_norm_forward_inference(p, part(0, {1, channels}), part(2, {channels}),
                                  part(3, {channels}), part(4, {channels}), part(5, {channels}),
                                  part(1, {1, channels}), Tensor());
  be.synchronize();
  return before;
}

}  // namespace dlbench::gpu_test
