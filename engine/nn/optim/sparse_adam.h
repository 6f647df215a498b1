// Lazy Adam over the ParamGroup::kSparseRows tables (Backend::sparse_adam_update): only the rows
// a step touched (the store's masks) change, weights and moments alike; untouched rows keep
// their bits. The step is Adam's (eps after the bias correction), so a table whose rows are all
// touched takes exactly Adam's step; tables are not decayed. One device step counter per table.
#pragma once

#include "engine/core/memory.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {

class SparseAdam final : public Optimizer {
 public:
  // The config's learning rate, betas, eps and max gradient norm (`sum_squares` as Adam's); its
  // kinds and weight decay do not apply.
  SparseAdam(const OptimizerConfig& config, backend::Backend& backend, const ParameterStore& store,
             Tensor sum_squares = {});
  std::string name() const override { return "sparse-adam"; }
  std::size_t state_bytes() const override { return moments_.bytes() + steps_.bytes(); }
  void update(ParameterStore& store, float grad_scale) override;

 private:
  OptimizerConfig config_;
  backend::Backend& backend_;
  Tensor sum_squares_;
  std::int64_t state_count_ = 0;  // elements of every table
  Buffer moments_;                // f32: m of every table, then v, in the store's order
  Buffer steps_;                  // i32, one counter per table
};

}  // namespace dlbench::nn
