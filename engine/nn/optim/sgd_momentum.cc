#include "engine/nn/optim/sgd_momentum.h"

#include <algorithm>

namespace dlbench::nn {

SgdMomentum::SgdMomentum(const OptimizerConfig& config, backend::Backend& backend,
                         const ParameterStore& store)
    : config_(config), backend_(backend) {
  const std::int64_t count = std::max<std::int64_t>(store.count(), 1);
  velocity_ = Buffer(backend_.allocator(), static_cast<std::size_t>(count) * sizeof(float));
  backend_.fill(Tensor(velocity_.data(), {count}, DType::kF32, backend_.device()), 0.0f);
}

void SgdMomentum::update(ParameterStore& store, float grad_scale) {
  auto range = [&](ParamRange r, float weight_decay) {
    if (r.size() <= 0) return;
    backend::SgdParams p;
    p.learning_rate = config_.learning_rate;
    p.momentum = config_.momentum;
    p.weight_decay = weight_decay;
    p.grad_scale = grad_scale;
    const Tensor velocity(static_cast<float*>(velocity_.data()) + r.begin, {r.size()}, DType::kF32,
                          backend_.device());
    backend_.sgd_momentum_update(p, store.master_weights(r), store.master_grads(r), velocity);
  };
  // The two ranges keep their alignment: the decayed range starts at 0.
  range(store.range(ParamGroup::kDecayed), config_.weight_decay);
  range({store.range(ParamGroup::kNotDecayed).begin, store.count()}, 0.0f);
}

}  // namespace dlbench::nn
