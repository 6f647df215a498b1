// What a step observer sees: each node's forward and backward and the step's other parts, as
// the host issues them (per-layer profiling records device events here).
#pragma once

#include <cstddef>

namespace dlbench::nn {

// The parts of a step.
enum class StepPart { kForward, kLoss, kBackward, kGradientSync, kUpdate };
const char* to_string(StepPart part);

// `node` indexes graph().nodes() for kForward and kBackward and is 0 otherwise.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void begin(StepPart part, std::size_t node) = 0;
  virtual void end(StepPart part, std::size_t node) = 0;
};

// Brackets one part of a step for the observer, if there is one (null: none).
class ObservedPart {
 public:
  ObservedPart(StepObserver* observer, StepPart part, std::size_t node)
      : observer_(observer), part_(part), node_(node) {
    if (observer_) observer_->begin(part_, node_);
  }
  ~ObservedPart() {
    if (observer_) observer_->end(part_, node_);
  }
  ObservedPart(const ObservedPart&) = delete;
  ObservedPart& operator=(const ObservedPart&) = delete;

 private:
  StepObserver* observer_;
  StepPart part_;
  std::size_t node_;
};

}  // namespace dlbench::nn
