// Per-layer time breakdown of a step: where a step's time goes, layer by layer.
//
// A LayerProfiler is the network's LayerObserver: it records a DeviceTimer mark at the begin
// and end of every part of a step (each node's forward, the loss, each node's backward, the
// gradient sync, the update), so on CUDA every span is read from events on the backend's
// stream and on the CPU from the host clock. The marks add work to the stream, so profiling
// runs as extra steps after the measured ones and never inside the measured window.
//
// What the numbers mean, as means over the profiled steps:
// - a part's time runs from its begin mark to its end mark on the stream, including any time
//   the device waited for the host to issue that part's work;
// - gaps are the stream time between one part's end and the next part's begin that no part
//   accounts for: between layers (the device waiting for the host), and between parts (in
//   mixed precision, the gradient cast and the fp16 finite check sit between backward and
//   update);
// - the step runs from the first mark to the last, so layers + parts + gaps = step (parts
//   nested inside another part are shown but not added again).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend/backend.h"
#include "engine/nn/network.h"

namespace dlbench::runner {

struct LayerTime {
  std::string name;  // "layer1.0.conv1"
  std::string kind;  // "conv2d"
  double forward_ms = 0;
  double backward_ms = 0;  // 0 in inference
  double total_ms() const { return forward_ms + backward_ms; }
};

// A part of the step that is not a layer (loss, gradient sync, update), or a gap.
struct PartTime {
  std::string name;  // "update", "between backward and update"
  double ms = 0;
};

// Layers of one kind together, and the step's other parts and gaps as their own rows.
struct KindTime {
  std::string kind;  // "conv2d", ..., "loss", "update", "gaps"
  int count = 0;     // layers of the kind (0 for parts and gaps)
  double ms = 0;
  double share = 0;  // of step_ms, in [0, 1]
};

struct LayerProfile {
  int steps = 0;                  // profiled steps the means are over
  std::string clock;              // what the marks read: "CUDA events on cuda:0's stream"
  std::vector<LayerTime> layers;  // node order
  std::vector<PartTime> parts;    // loss, gradient sync, update: those the step ran
  std::vector<PartTime> gaps;     // by where they fell, in the order first seen
  std::vector<KindTime> kinds;    // layer kinds by time (descending), then parts, then gaps
  double layers_ms = 0, parts_ms = 0, gaps_ms = 0;
  double nested_ms = 0;  // parts that ran inside another part: in both, counted once in the step
  double step_ms = 0;    // first mark to last mark = layers + parts + gaps - nested
};

class LayerProfiler final : public nn::LayerObserver {
 public:
  // Names and kinds come from the network's layer_summaries(); the timer holds one step's marks.
  LayerProfiler(backend::Backend& backend, const std::vector<nn::LayerSummary>& layers);

  void begin(nn::Pass pass, std::size_t node) override { record(pass, node, Edge::kBegin); }
  void end(nn::Pass pass, std::size_t node) override { record(pass, node, Edge::kEnd); }
  // After each profiled step: waits for the device, adds the step's spans, clears the marks.
  void end_step();
  LayerProfile result() const;

 private:
  enum class Edge { kBegin, kEnd };
  struct Mark {
    nn::Pass pass;
    std::size_t node;
    Edge edge;
  };
  void record(nn::Pass pass, std::size_t node, Edge edge);
  void add_part(const std::string& name, double ms);
  void add_gap(const Mark& before, const Mark& after, double ms);

  backend::Backend& backend_;
  std::vector<LayerTime> layers_;  // sums over the steps until result()
  std::vector<PartTime> parts_, gaps_;
  double step_ms_ = 0, nested_ms_ = 0;
  int steps_ = 0;
  std::vector<Mark> marks_;  // this step's, capacity reserved up front
  std::unique_ptr<backend::DeviceTimer> timer_;
};

// Runs `steps` extra steps with a profiler on `net` (step() issues one step; the profiler
// waits for the device after each) and returns the breakdown. The observer is removed again
// whatever happens.
LayerProfile profile_layers(nn::Network& net, backend::Backend& backend, int steps,
                            const std::function<void(int step)>& step);

nlohmann::json to_json(const LayerProfile& p);

}  // namespace dlbench::runner
