#include "engine/nn/layers/candidate_sampler.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {
namespace {
enum StateSlot { kDraws, kTable };
}  // namespace

CandidateSampler::CandidateSampler(const std::vector<double>& weights, int negatives,
                                   std::uint64_t seed)
    : negatives_(negatives), seed_(seed) {
  double total = 0;
  for (double w : weights) {
    DLBENCH_CHECK(w >= 0, "candidate_sampler: a negative weight");
    total += w;
  }
  DLBENCH_CHECK(!weights.empty() && total > 0, "candidate_sampler: no weight to draw by");
  DLBENCH_CHECK(negatives >= 0, "candidate_sampler: a negative count of negatives");
  double sum = 0;  // in double, then rounded once per entry, so the table ends at 1
  for (double w : weights) cdf_.push_back(static_cast<float>((sum += w) / total));
}

std::vector<OutputInfo> CandidateSampler::outputs(std::span<const ValueInfo> inputs) const {
  DLBENCH_CHECK(inputs[0].dtype == DType::kI32 && inputs[0].shape.rank() == 1,
                "candidate_sampler: contexts must be i32 [P], not " +
                    std::string(to_string(inputs[0].dtype)) + " " + inputs[0].shape.str());
  const std::int64_t rows = inputs[0].shape[0] * (1 + negatives_);
  return {{Shape{rows}, DType::kI32, false}, {Shape{rows, 1}, DType::kF32, false}};
}

std::vector<StateDecl> CandidateSampler::state(backend::Backend&) const {
  return {{"draws", sizeof(std::int32_t), Init::kZeros},
          {"table", sizeof(float) * cdf_.size(), Init::kZeros}};
}

void CandidateSampler::prepare(const StepContext& ctx) {
  ctx.backend.from_host(
      cdf_.data(),
      state_as(ctx.state[kTable], Shape{static_cast<std::int64_t>(cdf_.size())}, DType::kF32));
}

void CandidateSampler::forward(const StepContext& ctx) {
  const std::int64_t pairs = ctx.inputs[0].dim(0), m = 1 + negatives_;
  ctx.backend.sample_candidates(
      {seed_}, as_i32(ctx.state[kDraws], 1), ctx.inputs[0],
      state_as(ctx.state[kTable], Shape{static_cast<std::int64_t>(cdf_.size())}, DType::kF32),
      ctx.outputs[0].reshaped({pairs, m}), ctx.outputs[1].reshaped({pairs, m}));
}

}  // namespace dlbench::nn
