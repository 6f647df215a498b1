// The memory planner: every activation and activation gradient gets an offset in one arena,
// chosen from its lifetime over the step's schedule, so the peak is known before the first
// step (and a max-batch search needs no trial allocations).
//
// Schedule of a training step over L layers: forward of layer i at time i, every loss node at
// time L (its forward writes the gradient of what it reads), backward of layer i at time
// 2L - i. A value lives from its producer's forward until its last forward reader, or until
// the backward of any layer that saved it; an inference result (graph output) at least until
// L. Its gradient lives from the backward of its last reader to the backward of its producer.
// Graph inputs and the losses' outputs are not in the arena.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/nn/graph.h"

namespace dlbench::nn {

struct BufferRequest {
  std::size_t bytes = 0;
  int first = 0;  // inclusive schedule times
  int last = 0;
};

struct BufferPlan {
  std::vector<std::size_t> offsets;  // one per request
  std::size_t total_bytes = 0;       // the arena size: the planned peak
};

// Greedy placement, largest first, at the lowest offset that no buffer alive at the same time
// overlaps.
BufferPlan place_buffers(const std::vector<BufferRequest>& requests);

constexpr std::size_t kNoBuffer = static_cast<std::size_t>(-1);

struct ActivationPlan {
  std::vector<std::size_t> value_offset;  // per value; kNoBuffer for graph inputs and losses
  std::vector<std::size_t> grad_offset;   // per value; kNoBuffer when no gradient is needed
  // Per node and input: overwrite for the first gradient written into a value during
  // backward, accumulate for the rest (fan-out edges such as residual shortcuts).
  std::vector<std::vector<GradMode>> input_grad_modes;
  // Per node and parameter, the same rule for parameter gradients: the last user of a shared
  // parameter (the first to run backward) overwrites, the earlier ones accumulate.
  std::vector<std::vector<GradMode>> param_grad_modes;
  std::size_t total_bytes = 0;
};

ActivationPlan plan_activations(const Graph& graph, Mode mode);

}  // namespace dlbench::nn
