// NegativeSampler: a training batch for implicit feedback (NCF) made on the device from a batch
// of positive (user, item) pairs: the positives, then sampled negatives, with their labels.
#pragma once

#include <cstdint>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Inputs: users and items of P positives (i32 [P] each). Outputs: the batch's users and items
// (i32 [B]) and labels (f32 [B, 1]): rows 0..P-1 the positives with label 1, the other B - P
// rows negatives with label 0, negative j paired with positive j % P's user and an item drawn
// uniformly from [0, items) (Backend::sample_negatives). A counter in the layer's state advances
// on the device each step, so every step, replayed device graphs included, draws new negatives
// from the seed's stream. Nothing here is differentiable; backward does nothing.
class NegativeSampler final : public Layer {
 public:
  NegativeSampler(std::int64_t batch, std::int64_t items, std::uint64_t seed)
      : batch_(batch), items_(items), seed_(seed) {}
  const char* kind() const override { return "negative_sampler"; }
  int num_inputs() const override { return 2; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}

 private:
  std::int64_t batch_, items_;
  std::uint64_t seed_;
};

}  // namespace dlbench::nn
