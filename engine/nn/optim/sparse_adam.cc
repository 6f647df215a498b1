#include "engine/nn/optim/sparse_adam.h"

#include <algorithm>

#include "engine/nn/optim/adam.h"

namespace dlbench::nn {

SparseAdam::SparseAdam(const OptimizerConfig& config, backend::Backend& backend,
                       const ParameterStore& store, Tensor sum_squares)
    : config_(config), backend_(backend), sum_squares_(sum_squares) {
  for (const SparseTable& t : store.sparse_tables()) state_count_ += t.range.size();
  const std::int64_t floats = std::max<std::int64_t>(2 * state_count_, 1);
  moments_ = Buffer(backend_.allocator(), static_cast<std::size_t>(floats) * sizeof(float));
  backend_.fill(Tensor(moments_.data(), {floats}, DType::kF32, backend_.device()), 0.0f);
  const std::int64_t counters =
      std::max<std::int64_t>(static_cast<std::int64_t>(store.sparse_tables().size()), 1);
  steps_ = Buffer(backend_.allocator(), static_cast<std::size_t>(counters) * sizeof(std::int32_t));
  backend_.fill(Tensor(steps_.data(), {counters}, DType::kI32, backend_.device()), 0.0f);
}

void SparseAdam::update(ParameterStore& store, float grad_scale) {
  const backend::AdamParams p = adam_params(config_, true, false, grad_scale);
  float* moments = static_cast<float*>(moments_.data());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < store.sparse_tables().size(); ++i) {
    const SparseTable& t = store.sparse_tables()[i];
    const Shape shape{t.rows, t.columns};
    auto state = [&](std::int64_t base) {
      return Tensor(moments + base + offset, shape, DType::kF32, backend_.device());
    };
    const Tensor step(static_cast<std::int32_t*>(steps_.data()) + i, {1}, DType::kI32,
                      backend_.device());
    backend_.sparse_adam_update(p, step, store.master_weights(t.range).reshaped(shape),
                                store.master_grads(t.range).reshaped(shape), state(0),
                                state(state_count_), t.touched, sum_squares_);
    offset += t.range.size();
  }
}

}  // namespace dlbench::nn
