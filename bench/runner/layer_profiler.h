// The per-layer profiler: where a step's time goes, layer by layer (the result types are in
// bench/result/layer_profile.h).
//
// A LayerProfiler is the trainer's StepObserver: it records a DeviceTimer mark at the begin
// and end of every part of a step (each node's forward, the loss, each node's backward, the
// gradient sync, the update), so on CUDA every span is read from events on the backend's
// stream and on the CPU from the host clock. The marks add work to the stream, so profiling
// runs as extra steps after the measured ones and never inside the measured window.
//
// What the numbers mean: bench/result/layer_profile.h.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/result/layer_profile.h"
#include "engine/backend/backend.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

class LayerProfiler final : public nn::StepObserver {
 public:
  // Names and kinds come from the trainer's layer_summaries(); the timer holds one step's marks.
  LayerProfiler(backend::Backend& backend, const std::vector<nn::LayerSummary>& layers);

  void begin(nn::StepPart part, std::size_t node) override { record(part, node, Edge::kBegin); }
  void end(nn::StepPart part, std::size_t node) override { record(part, node, Edge::kEnd); }
  // After each profiled step: waits for the device, adds the step's spans, clears the marks.
  void end_step();
  result::LayerProfile result() const;

 private:
  enum class Edge { kBegin, kEnd };
  struct Mark {
    nn::StepPart part;
    std::size_t node;
    Edge edge;
  };
  void record(nn::StepPart part, std::size_t node, Edge edge);
  void add_part(const std::string& name, double ms);
  void add_gap(const Mark& before, const Mark& after, double ms);

  backend::Backend& backend_;
  std::vector<result::LayerTime> layers_;  // sums over the steps until result()
  std::vector<result::PartTime> parts_, gaps_;
  double step_ms_ = 0, nested_ms_ = 0;
  int steps_ = 0;
  std::vector<Mark> marks_;  // this step's, capacity reserved up front
  std::unique_ptr<backend::DeviceTimer> timer_;
};

// Runs `steps` extra steps with a profiler on `net` (step() issues one step; the profiler
// waits for the device after each) and returns the breakdown. The observer is removed again
// whatever happens.
result::LayerProfile profile_layers(nn::Trainer& net, backend::Backend& backend, int steps,
                                    const std::function<void(int step)>& step);

}  // namespace dlbench::runner
