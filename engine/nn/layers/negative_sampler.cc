#include "engine/nn/layers/negative_sampler.h"

#include "engine/nn/layers/layer_helpers.h"

namespace dlbench::nn {

std::vector<OutputInfo> NegativeSampler::outputs(std::span<const ValueInfo> inputs) const {
  const Shape& users = inputs[0].shape;
  DLBENCH_CHECK(inputs[0].dtype == DType::kI32 && inputs[1].dtype == DType::kI32 &&
                    users.rank() == 1 && inputs[1].shape == users,
                std::string("negative_sampler: users and items must be i32 [P] alike, not ") +
                    to_string(inputs[0].dtype) + " " + users.str() + " and " +
                    to_string(inputs[1].dtype) + " " + inputs[1].shape.str());
  DLBENCH_CHECK(users[0] > 0 && users[0] <= batch_,
                "negative_sampler: " + std::to_string(users[0]) + " positives for a batch of " +
                    std::to_string(batch_));
  return {{Shape{batch_}, DType::kI32, false},
          {Shape{batch_}, DType::kI32, false},
          {Shape{batch_, 1}, DType::kF32, false}};
}

std::vector<StateDecl> NegativeSampler::state(backend::Backend&) const {
  return {{"draws", sizeof(std::int32_t), Init::kZeros}};
}

void NegativeSampler::forward(const StepContext& ctx) {
  ctx.backend.sample_negatives({items_, seed_}, as_i32(ctx.state[0], 1), ctx.inputs[0],
                               ctx.inputs[1], ctx.outputs[0], ctx.outputs[1], ctx.outputs[2]);
}

}  // namespace dlbench::nn
