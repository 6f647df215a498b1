// Softmax cross-entropy of logits [m, classes] against i32 class labels [m], averaged over the
// rows: the image classifiers' loss. Logits of higher rank [..., classes] with labels [...]
// (NHWC scores per pixel against a label per pixel: segmentation) are the rows of their leading
// axes, averaged over every pixel of the batch. One fused op computes the loss and, in the same
// pass, the logits' gradient (scaled by the loss scale), so the backward has nothing left to do.
// With class weights (one per class), the mean is PyTorch's weighted one (Backend's op): a
// pixel of class c counts w[c] times, and the sum is divided by the pixels' total weight. Rows
// labelled -100 (CrossEntropyParams::ignore_label) count for nothing; label smoothing is the
// translators' option.
#pragma once

#include <vector>

#include "engine/nn/layer.h"

namespace dlbench::nn {

class SoftmaxCrossEntropy final : public Layer {
 public:
  SoftmaxCrossEntropy() = default;
  explicit SoftmaxCrossEntropy(std::vector<float> class_weights)
      : class_weights_(std::move(class_weights)) {}
  // Ignored labels and label smoothing (Backend::softmax_cross_entropy says how they count).
  explicit SoftmaxCrossEntropy(const backend::CrossEntropyParams& p) : p_(p) {}
  const char* kind() const override { return "softmax_cross_entropy"; }
  int num_inputs() const override { return 2; }  // logits, labels
  bool is_loss() const override { return true; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<StateDecl> state(backend::Backend& be) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}

 private:
  std::vector<float> class_weights_;  // empty: every class weighs 1 (a plain mean)
  backend::CrossEntropyParams p_;
};

}  // namespace dlbench::nn
