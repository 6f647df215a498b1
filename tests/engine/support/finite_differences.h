// Whole-trainer gradients against central finite differences of the step's loss, for tests on
// the CPU backend (the flat buffers are host memory). The trainer's optimizer must not move the
// weights (learning rate 0), so each train_step() only recomputes the loss and the gradients.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/nn/trainer.h"

namespace dlbench::test {

// One train step on what the trainer's inputs hold; the f32 gradient of every parameter, in the
// store's flat order.
std::vector<double> step_gradients(nn::Trainer& trainer);

// Each probe's step moves the loss by about loss_move (small enough for the linear regime, large
// enough to stay above f32 rounding), clamped to [min_step, max_step].
struct ProbeSteps {
  double loss_move = 1e-4;
  double min_step = 1e-5, max_step = 1e-2;
};

struct GradientProbe {
  std::int64_t index = 0;  // into the flat buffers
  double numeric = 0, analytic = 0;
};

// Central differences at each index (DLBENCH_DEBUG_GRAD=1 prints them).
std::vector<GradientProbe> probe_gradients(nn::Trainer& trainer,
                                           const std::vector<double>& analytic,
                                           const std::vector<std::int64_t>& indices,
                                           const ProbeSteps& steps = {});

// The largest |gradient| entries (count / 2 of them, where f32 differences mean most) and
// count / 2 drawn at random with the seed.
std::vector<std::int64_t> pick_probes(const std::vector<double>& analytic, int count,
                                      unsigned seed);

// sqrt(Σ (numeric - analytic)² / Σ max(numeric², analytic²)): 0 when they agree.
double relative_error(const std::vector<GradientProbe>& probes);

}  // namespace dlbench::test
