#include "engine/nn/optim/optimizer.h"

#include "engine/nn/optim/adam.h"
#include "engine/nn/optim/clip_by_norm.h"
#include "engine/nn/optim/composite.h"
#include "engine/nn/optim/sgd_momentum.h"
#include "engine/nn/optim/sparse_adam.h"

namespace dlbench::nn {
namespace {

using Kind = OptimizerConfig::Kind;

// sum_squares: where ClipByNorm leaves the gradients' sum of squares (undefined: no clipping).
std::unique_ptr<Optimizer> make_dense(const OptimizerConfig& config, backend::Backend& backend,
                                      const ParameterStore& store, Tables tables,
                                      Tensor sum_squares) {
  switch (config.kind) {
    case Kind::kSgdMomentum:
      return std::make_unique<SgdMomentum>(config, backend, store, tables);
    case Kind::kAdam:
    case Kind::kAdamW:
      return std::make_unique<Adam>(config, backend, store, tables, sum_squares);
    case Kind::kSparseAdam:
      break;
  }
  throw Error(ErrorKind::kInternal,
              std::string("optimizer kind ") + to_string(config.kind) +
                  " cannot update dense parameters (sparse Adam is for the tables' rows)");
}

}  // namespace

const char* to_string(OptimizerConfig::Kind kind) {
  switch (kind) {
    case Kind::kSgdMomentum:
      return "sgd-momentum";
    case Kind::kAdam:
      return "adam";
    case Kind::kAdamW:
      return "adamw";
    case Kind::kSparseAdam:
      return "sparse-adam";
  }
  return "unknown";
}

std::vector<DenseRange> dense_ranges(const ParameterStore& store, Tables tables) {
  std::vector<DenseRange> ranges;
  auto add = [&](ParamRange r, bool decayed) {
    if (r.size() <= 0) return;
    if (!decayed && !ranges.empty() && !ranges.back().decayed && ranges.back().range.end == r.begin)
      ranges.back().range.end = r.end;
    else
      ranges.push_back({r, decayed});
  };
  add(store.range(ParamGroup::kDecayed), true);
  add(store.range(ParamGroup::kNotDecayed), false);
  if (tables == Tables::kUpdate) add(store.range(ParamGroup::kSparseRows), false);
  add(store.range(ParamGroup::kKeptF32), false);
  return ranges;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, backend::Backend& backend,
                                          const ParameterStore& store) {
  DLBENCH_CHECK(config.sparse_kind == Kind::kSparseAdam || config.sparse_kind == config.kind,
                std::string("the tables' optimizer is sparse Adam or the dense one (") +
                    to_string(config.kind) + "), not " + to_string(config.sparse_kind));
  DLBENCH_CHECK(config.max_grad_norm >= 0, "the gradients' max norm must be >= 0");
  DLBENCH_CHECK(config.max_grad_norm == 0 || config.kind != Kind::kSgdMomentum,
                "clipping by gradient norm is built for the Adams, not SGD");
  const bool lazy_tables =
      config.sparse_kind == Kind::kSparseAdam && store.range(ParamGroup::kSparseRows).size() > 0;
  auto make = [&](Tensor sum_squares) -> std::unique_ptr<Optimizer> {
    std::unique_ptr<Optimizer> dense = make_dense(
        config, backend, store, lazy_tables ? Tables::kSkip : Tables::kUpdate, sum_squares);
    if (!lazy_tables) return dense;
    return std::make_unique<CompositeOptimizer>(
        std::move(dense), std::make_unique<SparseAdam>(config, backend, store, sum_squares));
  };
  if (config.max_grad_norm > 0) return std::make_unique<ClipByNorm>(backend, make);
  return make(Tensor{});
}

}  // namespace dlbench::nn
