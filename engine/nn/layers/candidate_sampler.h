// CandidateSampler: Word2Vec's negative sampling on the device: each (word, context) pair's
// context, then negatives drawn from the unigram^0.75 distribution, with their labels.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/nn/layer.h"

namespace dlbench::nn {

// Input: contexts (i32 [P]). Outputs: ids (i32 [P * (1 + negatives)]: each pair's context, then
// its negatives) and labels (f32 [P * (1 + negatives), 1]: 1 for the context, 0 for a negative),
// from Backend::sample_candidates. `weights` (one per word, not all 0) are the distribution the
// negatives are drawn from; their cumulative table goes to the device once, before the first
// step, and a counter in the layer's state advances each step, so every step, replayed device
// graphs included, draws anew. Nothing here is differentiable; backward does nothing.
class CandidateSampler final : public Layer {
 public:
  CandidateSampler(const std::vector<double>& weights, int negatives, std::uint64_t seed);
  const char* kind() const override { return "candidate_sampler"; }
  std::vector<OutputInfo> outputs(std::span<const ValueInfo> inputs) const override;
  std::vector<StateDecl> state(backend::Backend&) const override;
  void prepare(const StepContext& ctx) override;
  void forward(const StepContext& ctx) override;
  void backward(const StepContext&) override {}

 private:
  std::vector<float> cdf_;
  int negatives_;
  std::uint64_t seed_;
};

}  // namespace dlbench::nn
