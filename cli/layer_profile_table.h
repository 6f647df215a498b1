// dlbench run --profile-layers: where a step's time goes, as terminal tables. Every layer in
// node order (forward, backward, total, share of the step), then the step's other parts and
// its gaps, then the time by layer kind, then the most expensive layers.
#pragma once

#include <cstddef>
#include <ostream>

#include "bench/runner/layer_profiler.h"

namespace dlbench::cli {

// How many of the most expensive layers the summary at the end lists.
constexpr std::size_t kTopLayers = 10;

void print_layer_profile(std::ostream& out, const result::LayerProfile& profile);

}  // namespace dlbench::cli
