// RowDots: each row of one value against its own m candidate rows of another (Word2Vec's score
// of a word against its context and its negatives), forward and backward side by side.
#pragma once

#include <cstdint>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Inputs a [n, d] and c [n * m, d]; output y [n * m, 1], y[i m + j] = a[i, :] . c[i m + j, :],
// one logit per (row, candidate) as a binary loss takes them. Backward writes the gradients of
// both inputs (Backend::row_dots_backward).
class RowDots final : public Layer {
 public:
  // n rows of width d, m candidates each.
  RowDots(std::int64_t rows, std::int64_t candidates, std::int64_t width)
      : n_(rows), m_(candidates), d_(width) {}
  const char* kind() const override { return "row_dots"; }
  int num_inputs() const override { return 2; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  SavedForBackward saved_for_backward() const override { return {{0, 1}, {}}; }
  std::int64_t forward_macs() const override { return n_ * m_ * d_; }
  std::int64_t backward_macs(bool skip_input_grad) const override {
    return (skip_input_grad ? 1 : 2) * n_ * m_ * d_;
  }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  std::int64_t n_, m_, d_;
};

}  // namespace dlbench::nn
