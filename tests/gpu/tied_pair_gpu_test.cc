// The tied-pair model (tests/engine/models/tied_pair_model.cc) on the GPU: a CUDA step matches
// the CPU's (the loss, every gradient, and the losses of the Adam steps after it); with
// device graphs a loader that rotates batches replays one recording; fp16 and bf16 learn as
// fp32 does. Labelled gpu.
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

nn::Trainer make_trainer(backend::Backend& be, bool graphs,
                         Precision precision = Precision::kFp32) {
  const models::ModelSpec& spec = models::find_model(tp::kName);
  models::ModelConfig mc;
  mc.batch = tp::kBatch;
  mc.compute = compute_dtype(precision);
  nn::TrainerConfig nc;
  nc.optimizer = spec.default_optimizer;
  nc.device_graphs = graphs;
  nc.precision = precision;
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

struct Learned {
  float first = 0, last = 0;
};

Learned learn(backend::Backend& be, Precision precision, int steps) {
  nn::Trainer trainer = make_trainer(be, true, precision);
  data::SyntheticSource(trainer.graph().input_specs(), 29).fill(be, trainer.inputs());
  Learned l;
  trainer.train_step();
  l.first = trainer.loss();
  for (int step = 1; step < steps; ++step) trainer.train_step();
  l.last = trainer.loss();
  std::printf("%s: loss %.4f -> %.4f after %d steps, %d skipped; graphs %s\n", to_string(precision),
              l.first, l.last, steps, trainer.skipped_steps(), trainer.graph_status().c_str());
  return l;
}

// Mixed precision: the table is used and differentiated in the compute dtype (its rows gathered
// and scattered in f16 or bf16), its f32 masters updated lazily. The loss falls as in fp32 on
// the same batch, within the compute dtype's rounding.
constexpr double kMixedLossTolerance = 0.05;  // of fp32's loss after the same steps

void expect_mixed_precision_learns(Precision precision) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  constexpr int kLearnSteps = 60;
  auto be = backend::make_backend(Device::cuda(0));
  const Learned fp32 = learn(*be, Precision::kFp32, kLearnSteps);
  const Learned mixed = learn(*be, precision, kLearnSteps);
  EXPECT_TRUE(std::isfinite(mixed.last));
  EXPECT_LT(fp32.last, 0.7f * fp32.first);
  EXPECT_NEAR(mixed.last, fp32.last, kMixedLossTolerance * fp32.last);
}

TEST(TiedPairGpuTest, Fp16StepsLearn) {
  expect_mixed_precision_learns(Precision::kFp16);
}
TEST(TiedPairGpuTest, Bf16StepsLearn) {
  expect_mixed_precision_learns(Precision::kBf16);
}

}  // namespace
}  // namespace dlbench
