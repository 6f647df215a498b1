// Graph passes: rewrites of a built graph, before the executor plans it, into a graph that
// computes the same values with fewer or cheaper ops (a ReLU folded into the matmul before it).
// A pass rewrites only into ops the backend says it supports (Backend::supports), and the
// unfused graph stays available as the reference (Fusion::kOff) that tests compare against.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/run_modes.h"
#include "engine/nn/graph.h"

namespace dlbench::nn {

struct PassContext {
  const backend::Backend& backend;
  Mode mode;
};

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual const char* name() const = 0;  // "fuse_matmul_relu"
  // Rewrites `graph` in place; returns how many rewrites it made.
  virtual int run(Graph& graph, const PassContext& context) const = 0;
};

enum class Fusion { kOff, kOn };  // kOff: the graph as the model built it, the reference
const char* to_string(Fusion fusion);
Fusion parse_fusion(const std::string& text);  // "on" or "off"; Error(kUsage) otherwise

// Which passes ran and what each changed, in order: stored with a run.
struct PassReport {
  std::vector<std::pair<std::string, int>> rewrites;  // pass name, rewrites made
  int total() const;
};

// Runs every pass in order when fusion is on; with kOff the graph is left as it is.
PassReport apply_passes(Graph& graph, const PassContext& context, Fusion fusion);

}  // namespace dlbench::nn
