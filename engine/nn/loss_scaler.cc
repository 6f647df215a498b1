#include "engine/nn/loss_scaler.h"

#include <algorithm>

namespace dlbench::nn {

LossScaler::LossScaler(const LossScalerConfig& config, backend::Backend& backend)
    : config_(config), scale_(config.dynamic ? config.initial : 1.0f) {
  if (!config_.dynamic) return;
  buffer_ = Buffer(backend.allocator(), sizeof(float));
  on_device_ = Tensor(buffer_.data(), {1}, DType::kF32, backend.device());
  backend.fill(on_device_, scale_);
}

backend::LossScale LossScaler::loss_scale() const {
  return config_.dynamic ? backend::LossScale(on_device_) : backend::LossScale(1.0f);
}

bool LossScaler::accept(backend::Backend& backend, const Tensor& flat_grads) {
  if (!config_.dynamic) return true;
  const float before = scale_;
  const bool finite = backend.all_finite(flat_grads);
  if (!finite) {
    ++skipped_steps_;
    clean_steps_ = 0;
    scale_ = std::max(1.0f, scale_ / 2);
  } else if (++clean_steps_ >= config_.growth_interval) {
    clean_steps_ = 0;
    scale_ *= 2;  // from the next step on
  }
  // Queued after this step's work and before the next step's losses read it.
  if (scale_ != before) backend.fill(on_device_, scale_);
  return finite;
}

}  // namespace dlbench::nn
