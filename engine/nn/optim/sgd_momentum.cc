#include "engine/nn/optim/sgd_momentum.h"

#include <algorithm>

namespace dlbench::nn {

SgdMomentum::SgdMomentum(const OptimizerConfig& config, backend::Backend& backend,
                         const ParameterStore& store, Tables tables)
    : config_(config), backend_(backend), ranges_(dense_ranges(store, tables)) {
  const std::int64_t count = std::max<std::int64_t>(store.count(), 1);
  velocity_ = Buffer(backend_.allocator(), static_cast<std::size_t>(count) * sizeof(float));
  backend_.fill(Tensor(velocity_.data(), {count}, DType::kF32, backend_.device()), 0.0f);
}

void SgdMomentum::update(ParameterStore& store, float grad_scale) {
  // Without tables the ranges are today's two: the decayed group from 0, then the rest.
  for (const DenseRange& d : ranges_) {
    const ParamRange r = d.range;
    backend::SgdParams p;
    p.learning_rate = config_.learning_rate;
    p.momentum = config_.momentum;
    p.weight_decay = d.decayed ? config_.weight_decay : 0.0f;
    p.grad_scale = grad_scale;
    const Tensor velocity(static_cast<float*>(velocity_.data()) + r.begin, {r.size()}, DType::kF32,
                          backend_.device());
    backend_.sgd_momentum_update(p, store.master_weights(r), store.master_grads(r), velocity);
  }
}

}  // namespace dlbench::nn
