// Per-layer time breakdown of a step: where a step's time goes, layer by layer, as the
// runner's LayerProfiler (bench/runner/layer_profiler.h) measured it over extra steps.
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

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlbench::result {

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

nlohmann::json to_json(const LayerProfile& p);

}  // namespace dlbench::result
