// Soft Dice loss of per-pixel scores [samples, ..., classes] against i32 labels [samples, ...]:
// U-Net's second loss beside the per-pixel cross-entropy. One fused op computes the loss and,
// in the same call, the scores' gradient (scaled by the loss scale), as the other losses do, or
// adds it to the gradient there: losses run last first, so a Dice added to the graph before the
// cross-entropy on the same scores adds to what the cross-entropy wrote.
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Per sample and per class from first_class on (1: the background left out, as MLPerf's KiTS19
// reference), dice = (2 sum q g + s) / (sum q + sum g + s) over the sample's pixels, q the
// softmax of the scores and g the labels one-hot; the loss is 1 - the mean dice.
class SoftDice final : public Layer {
 public:
  explicit SoftDice(std::int64_t first_class = 1) : first_class_(first_class) {}
  const char* kind() const override { return "soft_dice"; }
  int num_inputs() const override { return 2; }  // scores, labels
  bool is_loss() const override { return true; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}

 private:
  std::int64_t first_class_;
};

}  // namespace dlbench::nn
