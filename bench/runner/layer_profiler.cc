#include "bench/runner/layer_profiler.h"

#include <algorithm>
#include <map>

#include "engine/core/error.h"

namespace dlbench::runner {
namespace {

// Marks one step may record per node: begin and end of its forward and of its backward, and
// room for a gradient-sync part per node should the sync run per bucket of layers.
constexpr std::size_t kMarksPerNode = 6;
// The loss, the update and a whole-step sync, with room to spare.
constexpr std::size_t kMarksPerStep = 16;

double share_of(double ms, double step_ms) {
  return step_ms > 0 ? ms / step_ms : 0.0;
}

}  // namespace

LayerProfiler::LayerProfiler(backend::Backend& backend, const std::vector<nn::LayerSummary>& layers)
    : backend_(backend) {
  for (const nn::LayerSummary& l : layers) layers_.push_back({l.name, l.kind});
  const std::size_t capacity = kMarksPerNode * layers_.size() + kMarksPerStep;
  marks_.reserve(capacity);
  timer_ = backend_.make_timer(capacity);
}

void LayerProfiler::record(nn::StepPart part, std::size_t node, Edge edge) {
  // The hot path of a profiled step: one mark, no allocation (marks_ has its capacity).
  DLBENCH_CHECK(marks_.size() < timer_->capacity(), "a step recorded more marks than the " +
                                                        std::to_string(timer_->capacity()) +
                                                        " the layer profiler made room for");
  timer_->mark(marks_.size());
  marks_.push_back({part, node, edge});
}

void LayerProfiler::add_part(const std::string& name, double ms) {
  for (result::PartTime& p : parts_)
    if (p.name == name) {
      p.ms += ms;
      return;
    }
  parts_.push_back({name, ms});
}

void LayerProfiler::add_gap(const Mark& before, const Mark& after, double ms) {
  const bool layers = before.part == after.part && (after.part == nn::StepPart::kForward ||
                                                    after.part == nn::StepPart::kBackward);
  const std::string name =
      layers ? std::string("between layers (") + to_string(after.part) + ")"
             : std::string("between ") + to_string(before.part) + " and " + to_string(after.part);
  for (result::PartTime& g : gaps_)
    if (g.name == name) {
      g.ms += ms;
      return;
    }
  gaps_.push_back({name, ms});
}

void LayerProfiler::end_step() {
  backend_.synchronize();
  if (marks_.empty()) return;
  std::vector<double> at(marks_.size());  // ms since the step's first mark
  for (std::size_t i = 0; i < marks_.size(); ++i) at[i] = timer_->elapsed_ms(0, i);

  std::vector<std::size_t> open;  // begin marks of the parts running, innermost last
  std::size_t last_end = marks_.size();
  for (std::size_t i = 0; i < marks_.size(); ++i) {
    const Mark& m = marks_[i];
    if (m.edge == Edge::kBegin) {
      if (open.empty() && last_end < marks_.size())
        add_gap(marks_[last_end], m, at[i] - at[last_end]);
      open.push_back(i);
      continue;
    }
    DLBENCH_CHECK(
        !open.empty() && marks_[open.back()].part == m.part && marks_[open.back()].node == m.node,
        std::string("the ") + to_string(m.part) + " part of node " + std::to_string(m.node) +
            " ended without beginning");
    const double ms = at[i] - at[open.back()];
    open.pop_back();
    if (m.part == nn::StepPart::kForward || m.part == nn::StepPart::kBackward) {
      DLBENCH_CHECK(m.node < layers_.size(), "the trainer observed node " + std::to_string(m.node) +
                                                 " of " + std::to_string(layers_.size()));
      (m.part == nn::StepPart::kForward ? layers_[m.node].forward_ms
                                        : layers_[m.node].backward_ms) += ms;
    } else {
      add_part(to_string(m.part), ms);
    }
    if (open.empty())
      last_end = i;
    else
      nested_ms_ += ms;
  }
  DLBENCH_CHECK(open.empty(), std::string("the ") + to_string(marks_[open.back()].part) +
                                  " part of node " + std::to_string(marks_[open.back()].node) +
                                  " began and never ended");
  step_ms_ += at.back();
  ++steps_;
  marks_.clear();
}

result::LayerProfile LayerProfiler::result() const {
  result::LayerProfile p;
  p.steps = steps_;
  p.clock = timer_->clock();
  const double n = std::max(steps_, 1);
  p.step_ms = step_ms_ / n;
  p.nested_ms = nested_ms_ / n;
  std::map<std::string, result::KindTime> by_kind;
  for (result::LayerTime l : layers_) {
    l.forward_ms /= n, l.backward_ms /= n;
    p.layers_ms += l.total_ms();
    result::KindTime& k = by_kind[l.kind];
    k.kind = l.kind;
    ++k.count;
    k.ms += l.total_ms();
    p.layers.push_back(std::move(l));
  }
  for (const auto& [kind, k] : by_kind) p.kinds.push_back(k);
  std::stable_sort(
      p.kinds.begin(), p.kinds.end(),
      [](const result::KindTime& a, const result::KindTime& b) { return a.ms > b.ms; });
  for (result::PartTime part : parts_) {
    part.ms /= n;
    p.parts_ms += part.ms;
    p.kinds.push_back({part.name, 0, part.ms});
    p.parts.push_back(std::move(part));
  }
  for (result::PartTime gap : gaps_) {
    gap.ms /= n;
    p.gaps_ms += gap.ms;
    p.gaps.push_back(std::move(gap));
  }
  if (!p.gaps.empty()) p.kinds.push_back({"gaps", 0, p.gaps_ms});
  for (result::KindTime& k : p.kinds) k.share = share_of(k.ms, p.step_ms);
  return p;
}

result::LayerProfile profile_layers(nn::Trainer& net, backend::Backend& backend, int steps,
                                    const std::function<void(int step)>& step) {
  LayerProfiler profiler(backend, net.layer_summaries());
  struct Detach {
    nn::Trainer& net;
    ~Detach() { net.set_observer(nullptr); }
  } detach{net};
  net.set_observer(&profiler);
  for (int i = 0; i < steps; ++i) {
    step(i);
    profiler.end_step();
  }
  return profiler.result();
}

}  // namespace dlbench::runner
