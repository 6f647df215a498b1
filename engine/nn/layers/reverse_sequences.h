// ReverseSequences: each sample's time-major sequence reversed within its own length, the
// padding after it left in place (Backend::reverse_sequences). The bidirectional LSTM's backward
// direction is an Lstm between two of these.
//   inputs   x [steps * batch, width]; lengths i32 [batch]
//   output   y [steps * batch, width]
// The reversal is its own inverse, so the backward reverses the gradient the same way.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

class ReverseSequences final : public Layer {
 public:
  explicit ReverseSequences(const backend::SequenceParams& p) : p_(p) {}
  const char* kind() const override { return "reverse_sequences"; }
  int num_inputs() const override { return 2; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  SavedForBackward saved_for_backward() const override { return {{1}, {}}; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  backend::SequenceParams p_;
};

}  // namespace dlbench::nn
