// Dynamic loss scaling for fp16 training (as PyTorch's GradScaler): the loss gradient is
// multiplied by S, a step whose gradients are not all finite is skipped and halves S, and S
// doubles after growth_interval clean steps. Off (S = 1, every step accepted) in the other
// precisions, whose exponent range needs none. S also lives on the device, where the losses read
// it: a recorded step replays with the scale of the moment, so a change records only the update
// again (it takes 1 / S as an argument), not the step.
#pragma once

#include "engine/backend/backend.h"
#include "engine/core/memory.h"

namespace dlbench::nn {

struct LossScalerConfig {
  bool dynamic = false;      // on for fp16
  float initial = 65536.0f;  // 2^16, as GradScaler
  int growth_interval = 2000;
};

class LossScaler {
 public:
  // The device copy of the scale is allocated on `backend`, which accept() must be given too.
  LossScaler(const LossScalerConfig& config, backend::Backend& backend);
  // What this step's loss gradient is multiplied by.
  float scale() const { return scale_; }
  // What the losses take: the scale's f32 [1] tensor on the device when dynamic, 1 otherwise.
  backend::LossScale loss_scale() const;
  // After backward: false (skip the update) when a gradient is not finite. Either way the
  // scale for the next step is set here. Always true when not dynamic (and reads nothing).
  bool accept(backend::Backend& backend, const Tensor& flat_grads);
  int skipped_steps() const { return skipped_steps_; }

 private:
  LossScalerConfig config_;
  float scale_ = 1.0f;
  // Dynamic only: scale_ as f32 [1] on the device, rewritten (on the stream) when it changes.
  Buffer buffer_;
  Tensor on_device_;
  int skipped_steps_ = 0;
  int clean_steps_ = 0;
};

}  // namespace dlbench::nn
