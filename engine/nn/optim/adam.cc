#include "engine/nn/optim/adam.h"

#include <algorithm>

namespace dlbench::nn {

backend::AdamParams adam_params(const OptimizerConfig& config, bool decoupled, bool decayed,
                                float grad_scale) {
  backend::AdamParams p;
  p.learning_rate = config.learning_rate;
  p.beta1 = config.beta1;
  p.beta2 = config.beta2;
  p.epsilon = config.epsilon;
  p.weight_decay = decayed ? config.weight_decay : 0.0f;
  p.grad_scale = grad_scale;
  p.decoupled = decoupled;
  p.max_grad_norm = config.max_grad_norm;
  return p;
}

Adam::Adam(const OptimizerConfig& config, backend::Backend& backend, const ParameterStore& store,
           Tables tables, Tensor sum_squares)
    : config_(config),
      decoupled_(config.kind == OptimizerConfig::Kind::kAdamW),
      backend_(backend),
      sum_squares_(sum_squares) {
  DLBENCH_CHECK(config.kind == OptimizerConfig::Kind::kAdam || decoupled_,
                "Adam takes a config of kind adam or adamw");
  for (const DenseRange& d : dense_ranges(store, tables)) {
    ranges_.push_back({d, state_count_});
    state_count_ += d.range.size();
  }
  const std::int64_t floats = std::max<std::int64_t>(2 * state_count_, 1);
  moments_ = Buffer(backend_.allocator(), static_cast<std::size_t>(floats) * sizeof(float));
  backend_.fill(Tensor(moments_.data(), {floats}, DType::kF32, backend_.device()), 0.0f);
  const std::int64_t counters =
      std::max<std::int64_t>(static_cast<std::int64_t>(ranges_.size()), 1);
  steps_ = Buffer(backend_.allocator(), static_cast<std::size_t>(counters) * sizeof(std::int32_t));
  backend_.fill(Tensor(steps_.data(), {counters}, DType::kI32, backend_.device()), 0.0f);
}

void Adam::update(ParameterStore& store, float grad_scale) {
  float* moments = static_cast<float*>(moments_.data());
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const Range& range = ranges_[i];
    const ParamRange r = range.dense.range;
    auto state = [&](std::int64_t offset) {
      return Tensor(moments + offset + range.state_offset, {r.size()}, DType::kF32,
                    backend_.device());
    };
    const Tensor step(static_cast<std::int32_t*>(steps_.data()) + i, {1}, DType::kI32,
                      backend_.device());
    backend_.adam_update(adam_params(config_, decoupled_, range.dense.decayed, grad_scale), step,
                         store.master_weights(r), store.master_grads(r), state(0),
                         state(state_count_), sum_squares_);
  }
}

}  // namespace dlbench::nn
