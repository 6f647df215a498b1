#include "engine/nn/optim/clip_by_norm.h"

namespace dlbench::nn {

ClipByNorm::ClipByNorm(backend::Backend& backend,
                       const std::function<std::unique_ptr<Optimizer>(Tensor)>& make)
    : backend_(backend), buffer_(backend.allocator(), sizeof(float)) {
  sum_squares_ = Tensor(buffer_.data(), {1}, DType::kF32, backend.device());
  backend_.fill(sum_squares_, 0.0f);
  inner_ = make(sum_squares_);
}

void ClipByNorm::update(ParameterStore& store, float grad_scale) {
  backend_.sum_squares(store.flat_grads(), sum_squares_, GradMode::kOverwrite);
  inner_->update(store, grad_scale);
}

}  // namespace dlbench::nn
