#include "engine/nn/loss_scaler.h"

#include <algorithm>

namespace dlbench::nn {

LossScaler::LossScaler(const LossScalerConfig& config)
    : config_(config), scale_(config.dynamic ? config.initial : 1.0f) {}

bool LossScaler::accept(backend::Backend& backend, const Tensor& flat_grads) {
  if (!config_.dynamic) return true;
  if (!backend.all_finite(flat_grads)) {
    ++skipped_steps_;
    clean_steps_ = 0;
    scale_ = std::max(1.0f, scale_ / 2);
    return false;
  }
  if (++clean_steps_ >= config_.growth_interval) {
    clean_steps_ = 0;
    scale_ *= 2;  // from the next step on
  }
  return true;
}

}  // namespace dlbench::nn
