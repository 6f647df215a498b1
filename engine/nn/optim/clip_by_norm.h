// ClipByNorm: clipping by the global norm of every gradient (PyTorch's clip_grad_norm_; GNMT
// clips at 5) in front of the Adams. Each update first sums the squares of the whole flat
// gradient buffer on the device (Backend::sum_squares), then runs the optimizer it wraps, whose
// updates read that sum where they scale the gradients (AdamParams::max_grad_norm). Nothing
// comes back to the host, so a recorded update replays it, and no pass over the gradients is
// added but the one sum.
#pragma once

#include <functional>
#include <memory>

#include "engine/core/memory.h"
#include "engine/nn/optim/optimizer.h"

namespace dlbench::nn {

class ClipByNorm final : public Optimizer {
 public:
  // `make` builds the wrapped optimizer from the device scalar its updates read.
  ClipByNorm(backend::Backend& backend,
             const std::function<std::unique_ptr<Optimizer>(Tensor sum_squares)>& make);
  std::string name() const override { return inner_->name(); }
  std::size_t state_bytes() const override { return inner_->state_bytes() + buffer_.bytes(); }
  void update(ParameterStore& store, float grad_scale) override;

 private:
  backend::Backend& backend_;
  Buffer buffer_;
  Tensor sum_squares_;
  std::unique_ptr<Optimizer> inner_;
};

}  // namespace dlbench::nn
