// What the fusion passes share: which values have one writer and one reader, and rebuilding the
// graph with some nodes folded into others.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "engine/nn/graph.h"

namespace dlbench::nn {

// Per value, the node that writes it where exactly one node reads it (a marked output counts
// as a reader), else -1 (graph inputs too): what a pass may fold into its one reader, whose
// intermediate value then disappears.
std::vector<int> sole_producers(const Graph& g);

// A node taking the nodes after it into its op: they leave the graph, it gains `extra_inputs`
// (values of the old graph) after its own and their parameters after its own (its layer declares
// them so once fused), its name gains theirs ("bn3+add+relu3"), and its
// output stands for `result` (the last absorbed node's output) from then on. It moves to where
// the last absorbed node was, so that every input it gained is computed before it.
// A node may also absorb nothing and only change: its layer may give it more outputs than it
// had (then they are all named "<node>:<i>"), and `added_inputs` takes outputs that another,
// earlier node gained this way (node index, output index) as inputs after the extra ones.
// `replace`, where set, gives the absorbing node another layer first, made from the old graph's
// layers (a linear becomes a FeedForward built from itself and the linear it absorbs).
struct Absorption {
  std::vector<std::size_t> absorbed;
  std::vector<ValueId> extra_inputs;
  ValueId result = -1;
  std::vector<std::pair<std::size_t, std::size_t>> added_inputs;
  std::function<std::unique_ptr<Layer>(Graph& old)> replace = {};
};

// The graph again, node by node, with each absorption made and `fuse(node, layer)` called on
// the absorbing layer first. Inputs and parameters keep their order and names, so the parameter
// store lays the weights out (and seeds them) exactly as for the unfused graph.
Graph rebuilt(Graph& old, const std::map<std::size_t, Absorption>& absorptions,
              const std::function<void(std::size_t, Layer&)>& fuse);

}  // namespace dlbench::nn
