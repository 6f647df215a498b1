// Sigmoid binary cross-entropy of logits [m, 1] against f32 targets [m, 1] in {0, 1}, averaged
// over the rows: a match/no-match head (NCF, Word2Vec's negative sampling). One fused op computes
// the loss and, in the same pass, the logits' gradient (sigmoid(x) - t) / m scaled by the loss
// scale, so the backward has nothing left to do.
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

class SigmoidBinaryCrossEntropy final : public Layer {
 public:
  const char* kind() const override { return "sigmoid_binary_cross_entropy"; }
  int num_inputs() const override { return 2; }  // logits, targets
  bool is_loss() const override { return true; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}
};

}  // namespace dlbench::nn
