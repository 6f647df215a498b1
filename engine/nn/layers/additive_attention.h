// AdditiveAttention: GNMT's normalized Bahdanau attention between the projections that make its
// queries and keys (two Linear layers: the queries' with a bias, the keys' without) and the
// layers that read its context (Backend::additive_attention_forward has the formulas).
//   inputs   q [queries * batch, width] and k [keys * batch, width], time-major as the LSTM's;
//            values [keys * batch, value_width] (the encoder's outputs); lengths i32 [batch]
//   outputs  the context [queries * batch, value_width]
//   params   v [width], U(-0.1, 0.1) as GNMT starts it; g [1], f32 in every precision, starting
//            at 1 / sqrt(width)
// The attention probabilities (f32 [batch, queries, keys]) are kept as state for backward, or
// with AttentionProbs::kOutput (inference: beam search's coverage) are a second output.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

enum class AttentionProbs { kState, kOutput };

class AdditiveAttention final : public Layer {
 public:
  explicit AdditiveAttention(const backend::AdditiveAttentionParams& p,
                             AttentionProbs probs = AttentionProbs::kState);
  const char* kind() const override { return "additive_attention"; }
  int num_inputs() const override { return 4; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<ParamDecl> params() const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override { return {{0, 1, 2, 3}, {}}; }
  std::int64_t forward_macs() const override { return p_.macs(); }
  // The scores' terms twice (the queries' and the keys' gradients) and the context's products
  // twice (the probabilities' and the values' gradients).
  std::int64_t backward_macs(bool) const override { return 2 * p_.macs(); }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  Tensor probs(const StepContext& ctx) const;

  backend::AdditiveAttentionParams p_;
  bool probs_out_;
};

}  // namespace dlbench::nn
