// SplitColumns: one [rows, Σ widths] value cut into column blocks, a node with several outputs
// (forward and backward side by side).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Output k = x[:, c_k : c_k + widths[k]], c_k = Σ_{j<k} widths[j]; backward writes each output's
// gradient back into its own columns of dx. The blocks are disjoint and cover every column, so
// each one takes the node's gradient mode for dx: overwrite writes all of dx once, accumulate
// adds to all of it. Every output must be read (a block without a reader has no gradient).
class SplitColumns final : public Layer {
 public:
  explicit SplitColumns(std::vector<std::int64_t> widths) : widths_(std::move(widths)) {}
  const char* kind() const override { return "split_columns"; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  std::vector<std::int64_t> widths_;
};

}  // namespace dlbench::nn
