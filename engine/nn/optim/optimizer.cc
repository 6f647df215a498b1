#include "engine/nn/optim/optimizer.h"

#include "engine/nn/optim/sgd_momentum.h"

namespace dlbench::nn {

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, backend::Backend& backend,
                                          const ParameterStore& store) {
  switch (config.kind) {
    case OptimizerConfig::Kind::kSgdMomentum:
      return std::make_unique<SgdMomentum>(config, backend, store);
  }
  throw Error(ErrorKind::kInternal, "unknown optimizer kind");
}

}  // namespace dlbench::nn
