// CompositeOptimizer: two optimizers over disjoint parts of one store, run one after the other
// in each update: the dense groups' (SGD, Adam, AdamW) and the sparse-rows tables' (lazy Adam),
// as NCF and Word2Vec train (torch.optim.SparseAdam beside Adam).
#pragma once

#include <memory>

#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {

class CompositeOptimizer final : public Optimizer {
 public:
  CompositeOptimizer(std::unique_ptr<Optimizer> dense, std::unique_ptr<Optimizer> sparse)
      : dense_(std::move(dense)), sparse_(std::move(sparse)) {}
  std::string name() const override { return dense_->name() + "+" + sparse_->name(); }
  std::size_t state_bytes() const override {
    return dense_->state_bytes() + sparse_->state_bytes();
  }
  void update(ParameterStore& store, float grad_scale) override {
    dense_->update(store, grad_scale);
    sparse_->update(store, grad_scale);
  }

 private:
  std::unique_ptr<Optimizer> dense_, sparse_;
};

}  // namespace dlbench::nn
