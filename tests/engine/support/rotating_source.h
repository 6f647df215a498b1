// A loader that rotates two batches, each drawn once (synthetic, seeds 100 and 101) into staging
// buffers of its own and copied into the trainer's inputs: a new batch at the same addresses
// every step, as a real data loader gives. Device-graph tests use it to show that a recording
// does not depend on where the batch came from.
#pragma once

#include <list>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/checked.h"
#include "engine/data/synthetic.h"
#include "engine/nn/trainer.h"

namespace dlbench::test {

class RotatingSource final : public data::DataSource {
 public:
  RotatingSource(backend::Backend& be, const std::vector<data::InputSpec>& specs) {
    for (int b = 0; b < 2; ++b) {
      for (const data::InputSpec& spec : specs) {
        buffers_.emplace_back(be.allocator(), checked_bytes(spec.shape, spec.dtype));
        batches_[b].push_back(Tensor(buffers_.back().data(), spec.shape, spec.dtype, be.device()));
      }
      data::SyntheticSource(specs, 100 + b).fill(be, batches_[b]);
    }
  }
  std::string name() const override { return "rotating"; }
  void fill(backend::Backend& be, std::span<const Tensor> inputs) override {
    const std::vector<Tensor>& batch = batches_[next_++ % 2];
    for (std::size_t k = 0; k < inputs.size(); ++k) be.copy(batch[k], inputs[k]);
  }

 private:
  std::list<Buffer> buffers_;
  std::vector<Tensor> batches_[2];
  int next_ = 0;
};

struct RotatingRun {
  std::vector<float> losses;  // one per step
  std::string graph_status;   // the trainer's, after the steps
};

// `steps` train steps, each on the next of a RotatingSource's batches.
inline RotatingRun train_rotating(backend::Backend& be, nn::Trainer& trainer, int steps) {
  RotatingSource source(be, trainer.graph().input_specs());
  RotatingRun run;
  for (int step = 0; step < steps; ++step) {
    source.fill(be, trainer.inputs());
    trainer.train_step();
    run.losses.push_back(trainer.loss());
  }
  run.graph_status = trainer.graph_status();
  return run;
}

}  // namespace dlbench::test
