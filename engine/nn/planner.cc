#include "engine/nn/planner.h"

#include <algorithm>
#include <numeric>

#include "engine/core/checked.h"
#include "engine/core/memory.h"

namespace dlbench::nn {

namespace {

// A placed buffer: bytes [offset, end) from schedule time first to last (inclusive).
struct Placed {
  std::size_t offset, end;
  int first, last;
  bool overlaps(int from, int to) const { return first <= to && from <= last; }
};

// The lowest offset where `size` bytes fit clear of every placed buffer alive at some time in
// [from, to]: 0 or the end of one of them.
std::size_t lowest_fit(const std::vector<Placed>& placed, int from, int to, std::size_t size) {
  std::vector<Placed> live;
  for (const Placed& p : placed)
    if (p.overlaps(from, to)) live.push_back(p);
  std::sort(live.begin(), live.end(),
            [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  std::size_t offset = 0;
  for (const Placed& p : live) {
    if (offset + size <= p.offset) break;
    offset = std::max(offset, p.end);
  }
  return offset;
}

}  // namespace

BufferPlan place_buffers(const std::vector<BufferRequest>& requests) {
  BufferPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });
  std::vector<Placed> placed;
  for (std::size_t i : order) {
    const BufferRequest& r = requests[i];
    const std::size_t size = align_up(r.bytes);
    const std::size_t offset = lowest_fit(placed, r.first, r.last, size);
    plan.offsets[i] = offset;
    const std::size_t end = checked_add(offset, size, "the planned activation memory");
    placed.push_back({offset, end, r.first, r.last});
    plan.total_bytes = std::max(plan.total_bytes, end);
  }
  return plan;
}

int forward_time(const Graph& graph, std::size_t node) {
  return static_cast<int>(std::min(node, graph.layer_count()));
}

int backward_time(const Graph& graph, std::size_t node) {
  const std::size_t layers = graph.layer_count();
  return static_cast<int>(node < layers ? 2 * layers - node : layers);
}

ActivationPlan plan_activations(const Graph& graph, Mode mode) {
  const auto& values = graph.values();
  const auto& nodes = graph.nodes();
  // L: the model's layers. Loss nodes (after them) all run at time L, in training only.
  const int layers = static_cast<int>(graph.layer_count());
  const bool train = mode == Mode::kTrain;
  auto forward_time = [&](int node) {
    return nn::forward_time(graph, static_cast<std::size_t>(node));
  };
  auto backward_time = [&](int node) {
    return nn::backward_time(graph, static_cast<std::size_t>(node));
  };
  const int scheduled = train ? static_cast<int>(nodes.size()) : layers;

  std::vector<int> first(values.size(), 0), last(values.size(), 0);
  std::vector<int> last_reader(values.size(), -1);
  for (std::size_t v = 0; v < values.size(); ++v) {
    first[v] = last[v] = forward_time(std::max(values[v].producer, 0));
  }
  for (int n = 0; n < scheduled; ++n) {
    const Node& node = nodes[n];
    SavedForBackward saved = node.layer->saved_for_backward();
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId v = node.inputs[i];
      last[v] = std::max(last[v], forward_time(n));
      last_reader[v] = std::max(last_reader[v], n);
      bool keeps = std::find(saved.inputs.begin(), saved.inputs.end(), static_cast<int>(i)) !=
                   saved.inputs.end();
      if (train && keeps) last[v] = std::max(last[v], backward_time(n));
    }
    if (train)
      for (int o : saved.outputs)
        last[node.outputs.at(o)] = std::max(last[node.outputs.at(o)], backward_time(n));
  }
  // Inference results (the logits) live to the end of the forward pass.
  for (ValueId v : graph.outputs()) last[v] = std::max(last[v], layers);

  ActivationPlan plan;
  plan.value_offset.assign(values.size(), kNoBuffer);
  plan.grad_offset.assign(values.size(), kNoBuffer);
  std::vector<BufferRequest> requests;
  std::vector<std::pair<std::size_t, bool>> owner;  // (value, is_grad)
  for (std::size_t v = 0; v < values.size(); ++v) {
    // The batch comes from the data source; a loss lives outside the arena (the executor's).
    if (values[v].producer < 0 || values[v].producer >= layers) continue;
    std::size_t bytes = checked_bytes(values[v].shape, values[v].dtype);
    requests.push_back({bytes, first[v], last[v]});
    owner.push_back({v, false});
    if (train && values[v].needs_grad) {
      int producer_backward = backward_time(values[v].producer);
      // The last reader in forward order writes the gradient first: a loss at time L.
      int first_write = last_reader[v] >= 0 ? backward_time(last_reader[v]) : layers;
      requests.push_back({bytes, first_write, producer_backward});
      owner.push_back({v, true});
    }
  }
  BufferPlan placed = place_buffers(requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto [v, is_grad] = owner[i];
    (is_grad ? plan.grad_offset : plan.value_offset)[v] = placed.offsets[i];
  }
  plan.total_bytes = placed.total_bytes;
  plan.buffers = std::move(requests);
  plan.buffer_offsets = std::move(placed.offsets);

  // Backward runs nodes in reverse (the losses first, at time L): the first gradient written
  // into a value overwrites it.
  plan.input_grad_modes.resize(nodes.size());
  plan.param_grad_modes.resize(nodes.size());
  std::vector<bool> written(values.size(), false), param_written(graph.params().size(), false);
  for (int n = static_cast<int>(nodes.size()) - 1; n >= 0; --n) {
    const Node& node = nodes[n];
    auto& modes = plan.input_grad_modes[n];
    modes.assign(node.inputs.size(), GradMode::kOverwrite);
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId v = node.inputs[i];
      if (!values[v].needs_grad) continue;
      modes[i] = written[v] ? GradMode::kAccumulate : GradMode::kOverwrite;
      written[v] = true;
    }
    for (ParamId p : node.params) {
      plan.param_grad_modes[n].push_back(param_written[p] ? GradMode::kAccumulate
                                                          : GradMode::kOverwrite);
      param_written[p] = true;
    }
  }
  return plan;
}

std::size_t free_offset_at(const ActivationPlan& plan, int time, std::size_t bytes) {
  std::vector<Placed> placed;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferRequest& b = plan.buffers[i];
    placed.push_back(
        {plan.buffer_offsets[i], plan.buffer_offsets[i] + align_up(b.bytes), b.first, b.last});
  }
  const std::size_t size = align_up(bytes);
  const std::size_t offset = lowest_fit(placed, time, time, size);
  return offset + size <= plan.total_bytes ? offset : kNoBuffer;
}

}  // namespace dlbench::nn
