// SelectPosition: one position of every sequence, BERT's [CLS] row for the pooler (forward and
// backward side by side).
#pragma once

#include <cstdint>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// x [batch * sequence, width] (a row per (sample, position)) -> y [batch, width], y[n] =
// x[n * sequence + position]. Viewed as [batch, sequence * width], the row is a column block,
// so both directions are one copy_columns; backward writes dy there and zeros elsewhere
// (overwrite) or adds dy there (accumulate).
class SelectPosition final : public Layer {
 public:
  SelectPosition(std::int64_t sequence, std::int64_t position)
      : sequence_(sequence), position_(position) {}
  const char* kind() const override { return "select_position"; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  Tensor by_sample(const Tensor& rows) const;  // [batch, sequence * width]

  std::int64_t sequence_, position_;
};

}  // namespace dlbench::nn
