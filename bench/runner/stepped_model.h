// SteppedModel: what a run steps and measures. A trainer (training steps, or inference of one
// forward pass), or for a translation model's inference (ModelSpec::build_decoding) a sequence
// decoder, greedy or with RunConfig::beam hypotheses: an encoder pass and a step graph per output
// position. The runner asks both the same questions; what only a trainer has (its loss,
// profiles, evaluations) it reaches through trainer().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/result/run_config.h"
#include "engine/backend/backend.h"
#include "engine/dist/communicator.h"
#include "engine/models/model_spec.h"
#include "engine/nn/sequence_decoder.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

class SteppedModel {
 public:
  SteppedModel(const models::ModelSpec& model, const models::ModelConfig& mc,
               const result::RunConfig& config, backend::Backend& be,
               dist::Communicator* communicator);

  bool decodes() const { return decoder_ != nullptr; }
  // Null when decoding.
  nn::Trainer* trainer() const { return trainer_.get(); }
  const nn::SequenceDecoder* decoder() const { return decoder_.get(); }

  // The batch's inputs, which a data source fills before each step, and what they are.
  std::span<const Tensor> inputs() const;
  const std::vector<data::InputSpec>& input_specs() const;
  // One step: a training step, a forward pass, or one batch translated.
  void step();

  std::int64_t parameter_count() const;
  // Multiply-accumulates of one step (decoding: up to its longest translation).
  std::int64_t step_macs() const;
  std::vector<nn::LayerSummary> layer_summaries() const;
  std::vector<std::pair<std::string, int>> pass_rewrites() const;
  nn::MemoryReport memory() const;
  std::string graph_status() const;
  // A hash of the weights: replicas that stayed in step hash the same.
  std::uint64_t weights_hash(backend::Backend& be) const;

 private:
  std::unique_ptr<nn::Trainer> trainer_;
  std::unique_ptr<nn::SequenceDecoder> decoder_;
};

}  // namespace dlbench::runner
