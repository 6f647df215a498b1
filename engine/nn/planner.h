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
  // Every arena buffer's lifetime and offset, for free_offset_at.
  std::vector<BufferRequest> buffers;
  std::vector<std::size_t> buffer_offsets;
};

ActivationPlan plan_activations(const Graph& graph, Mode mode);

// When node `node` runs its forward and its backward in the schedule above (a loss node: L).
int forward_time(const Graph& graph, std::size_t node);
int backward_time(const Graph& graph, std::size_t node);

// Where `bytes` needed at one schedule time only (the workspace of a node's ops while it runs)
// fit in the arena without moving what is planned: the lowest offset clear of every buffer live
// at `time`, or kNoBuffer where no gap is wide enough. Nothing already planned moves, so the
// arena, and the peak, stay as they are.
std::size_t free_offset_at(const ActivationPlan& plan, int time, std::size_t bytes);

}  // namespace dlbench::nn
