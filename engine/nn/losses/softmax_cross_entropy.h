// Softmax cross-entropy of logits [m, classes] against i32 class labels [m], averaged over the
// rows: the image classifiers' loss. Logits of higher rank [..., classes] with labels [...]
// (NHWC scores per pixel against a label per pixel: segmentation) are the rows of their leading
// axes, averaged over every pixel of the batch. One fused op computes the loss and, in the same
// pass, the logits' gradient (scaled by the loss scale), so the backward has nothing left to do.
#pragma once

#include "engine/nn/layer.h"

namespace dlbench::nn {

class SoftmaxCrossEntropy final : public Layer {
 public:
  const char* kind() const override { return "softmax_cross_entropy"; }
  int num_inputs() const override { return 2; }  // logits, labels
  bool is_loss() const override { return true; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}
};

}  // namespace dlbench::nn
