// Attention: the core of multi-head attention (BERT's encoder, the Transformer), between the
// projections that make q, k and v and the one that mixes the heads' outputs.
#pragma once

#include "engine/backend/op_params.h"
#include "engine/nn/layer.h"

namespace dlbench::nn {

// Which sequence lengths the layer takes as inputs after q, k and v (i32 [batch] each): none
// (every position counts), one for queries and keys alike (self-attention over padded
// sequences), or one each (cross-attention: target queries over source keys).
enum class AttentionLengths { kNone, kShared, kSeparate };

// o = softmax(scale q k^T, masked) v for every head (Backend::attention_forward): inputs q
// [batch * seq_q, heads * head_dim], k and v [batch * seq_kv, heads * head_dim], then the
// lengths. The per-query log-sum-exp is kept for backward, which recomputes the probabilities.
// q, k and v must be three values (as three projections make them) whose gradients are written
// in one mode.
class Attention final : public Layer {
 public:
  Attention(const backend::AttentionParams& p, AttentionLengths lengths);
  const char* kind() const override { return "attention"; }
  int num_inputs() const override;
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  SavedForBackward saved_for_backward() const override;
  std::int64_t forward_macs() const override { return p_.macs(); }
  // q k^T again, then dV, dP, dQ and dK: five products of forward's size, half of forward's
  // two-product count each.
  std::int64_t backward_macs(bool) const override { return p_.macs() / 2 * 5; }
  void set_math(backend::MathMode math) override { p_.math = math; }
  void forward(const StepContext& ctx) override;
  void backward(const StepContext& ctx) override;

 private:
  Tensor q_lengths(const StepContext& ctx) const;
  Tensor kv_lengths(const StepContext& ctx) const;

  backend::AttentionParams p_;
  AttentionLengths lengths_;
};

}  // namespace dlbench::nn
