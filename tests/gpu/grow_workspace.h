// For the tests of recordings that must notice their backend's scratch moving: ops run outside
// any recording that ask the backend for a workspace of a chosen size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"

namespace dlbench::gpu_test {

// The CUDA backend keeps 4 f32 coefficients a channel in its workspace for a batch norm in
// inference, so a request is a multiple of this.
constexpr std::size_t kWorkspacePerChannel = 4 * sizeof(float);

// A batch norm in inference over `channels` channels: a workspace request of
// channels * kWorkspacePerChannel bytes.
inline void request_workspace(backend::Backend& be, std::int64_t channels) {
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
}

// A request larger than all of `be`'s scratch, so that its workspace reallocates. Returns the
// scratch's bytes before.
inline std::size_t grow_workspace(backend::Backend& be) {
  const std::size_t before = be.workspace_bytes();
  request_workspace(be, static_cast<std::int64_t>(before / kWorkspacePerChannel / 64 + 16) * 64);
  return before;
}

}  // namespace dlbench::gpu_test
