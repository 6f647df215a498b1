// The tied-pair model (tests/engine/models/tied_pair_model.cc) on the GPU: a CUDA step matches
// the CPU's (the loss, every gradient, and the losses of the Adam steps after it), and with
// device graphs a loader that rotates batches replays one recording. Labelled gpu.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"
#include "tests/engine/models/tied_pair_model.h"
#include "tests/engine/support/rotating_source.h"

namespace dlbench {
namespace {

namespace tp = models::tied_pair;

// Strict fp32 on both sides; the gathers, the deterministic scatter-add and the copies are
// exact, so what differs is the matrix products' and the losses' summation order.
constexpr double kLossTolerance = 1e-5;
constexpr double kGradientTolerance = 1e-4;  // on the relative norm of the difference
constexpr double kStepsTolerance = 1e-3;     // losses after Adam steps
constexpr int kSteps = 4;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

nn::Trainer make_trainer(backend::Backend& be, bool graphs) {
  const models::ModelSpec& spec = models::find_model(tp::kName);
  models::ModelConfig mc;
  mc.batch = tp::kBatch;
  nn::TrainerConfig nc;
  nc.optimizer = spec.default_optimizer;
  nc.device_graphs = graphs;
  return nn::Trainer(spec.build(models::resolve(spec, mc)), be, nc);
}

struct StepsRun {
  std::vector<float> losses;
  std::vector<float> first_grads;
};

StepsRun run_steps(const Device& device) {
  auto be = backend::make_backend(device);
  nn::Trainer trainer = make_trainer(*be, true);
  // The counter-based generator gives both devices the same batch and weights.
  data::SyntheticSource(trainer.graph().input_specs(), 23).fill(*be, trainer.inputs());
  StepsRun r;
  for (int step = 0; step < kSteps; ++step) {
    trainer.train_step();
    r.losses.push_back(trainer.loss());
    if (step == 0) {
      r.first_grads.resize(static_cast<std::size_t>(trainer.parameter_count()));
      be->to_host(trainer.flat_grads(), r.first_grads.data());
    }
  }
  return r;
}

TEST(TiedPairGpuTest, ACudaStepMatchesTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const StepsRun cpu = run_steps(Device::cpu());
  const StepsRun gpu = run_steps(Device::cuda(0));
  EXPECT_NEAR(gpu.losses[0], cpu.losses[0], kLossTolerance * std::fabs(cpu.losses[0]));
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < cpu.first_grads.size(); ++i) {
    diff += std::pow(double(gpu.first_grads[i]) - cpu.first_grads[i], 2);
    norm += std::pow(double(cpu.first_grads[i]), 2);
  }
  std::printf("gradients differ by %.2e; losses cpu", std::sqrt(diff / norm));
  for (float l : cpu.losses) std::printf(" %.6f", l);
  std::printf(", cuda");
  for (float l : gpu.losses) std::printf(" %.6f", l);
  std::printf("\n");
  EXPECT_LT(std::sqrt(diff / norm), kGradientTolerance);
  for (int step = 1; step < kSteps; ++step)
    EXPECT_NEAR(gpu.losses[step], cpu.losses[step], kStepsTolerance * std::fabs(cpu.losses[step]))
        << "step " << step;
}

// The recorded step reads the trainer's input buffers, the device step counters and the touched
// masks: new ids each step replay one recording, with the eager steps' losses.
TEST(TiedPairGpuTest, ARotatingLoaderReplaysOneRecording) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  auto be = backend::make_backend(Device::cuda(0));
  nn::Trainer eager_trainer = make_trainer(*be, false), graph_trainer = make_trainer(*be, true);
  const test::RotatingRun eager = test::train_rotating(*be, eager_trainer, 5);
  const test::RotatingRun graphed = test::train_rotating(*be, graph_trainer, 5);
  EXPECT_EQ(graphed.graph_status.rfind("on (1 recording;", 0), 0u) << graphed.graph_status;
  for (std::size_t i = 0; i < eager.losses.size(); ++i)
    EXPECT_NEAR(graphed.losses[i], eager.losses[i], 1e-5 * std::fabs(eager.losses[i]))
        << "step " << i;
  EXPECT_NE(eager.losses[1], eager.losses[2]);
}

}  // namespace
}  // namespace dlbench
