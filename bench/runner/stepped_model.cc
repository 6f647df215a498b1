#include "bench/runner/stepped_model.h"

#include "bench/runner/trainer_setup.h"
#include "engine/core/hash.h"

namespace dlbench::runner {

SteppedModel::SteppedModel(const models::ModelSpec& model, const models::ModelConfig& mc,
                           const result::RunConfig& config, backend::Backend& be,
                           dist::Communicator* communicator) {
  const nn::TrainerConfig tc = trainer_config(model, config, communicator);
  if (config.mode == Mode::kInfer && model.build_decoding)
    decoder_ = std::make_unique<nn::SequenceDecoder>(model.build_decoding(mc, config.beam), be, tc);
  else
    trainer_ = std::make_unique<nn::Trainer>(model.build(mc), be, tc);
}

std::span<const Tensor> SteppedModel::inputs() const {
  return decoder_ ? decoder_->inputs() : trainer_->inputs();
}

const std::vector<data::InputSpec>& SteppedModel::input_specs() const {
  return decoder_ ? decoder_->encoder().graph().input_specs() : trainer_->graph().input_specs();
}

void SteppedModel::step() {
  if (decoder_)
    decoder_->decode();
  else if (trainer_->mode() == Mode::kTrain)
    trainer_->train_step();
  else
    trainer_->infer_step();
}

std::int64_t SteppedModel::parameter_count() const {
  return decoder_ ? decoder_->parameter_count() : trainer_->parameter_count();
}

std::int64_t SteppedModel::step_macs() const {
  if (decoder_) return decoder_->forward_macs();
  return trainer_->mode() == Mode::kTrain ? trainer_->train_macs() : trainer_->forward_macs();
}

std::vector<nn::LayerSummary> SteppedModel::layer_summaries() const {
  return decoder_ ? decoder_->layer_summaries() : trainer_->layer_summaries();
}

std::vector<std::pair<std::string, int>> SteppedModel::pass_rewrites() const {
  if (!decoder_) return trainer_->passes().rewrites;
  std::vector<std::pair<std::string, int>> out = decoder_->encoder().passes().rewrites;
  for (const auto& [pass, n] : decoder_->step().passes().rewrites) {
    bool merged = false;
    for (auto& [name, count] : out)
      if (name == pass) count += n, merged = true;
    if (!merged) out.push_back({pass, n});
  }
  return out;
}

nn::MemoryReport SteppedModel::memory() const {
  return decoder_ ? decoder_->memory() : trainer_->memory();
}

std::string SteppedModel::graph_status() const {
  return decoder_ ? decoder_->graph_status() : trainer_->graph_status();
}

std::uint64_t SteppedModel::weights_hash(backend::Backend& be) const {
  const auto hash = [&](const Tensor& w) {
    std::vector<unsigned char> bytes(w.bytes());
    be.to_host(w, bytes.data());
    return fnv1a(bytes.data(), bytes.size());
  };
  if (!decoder_) return hash(trainer_->flat_weights());
  // The decoder's two graphs' weights, in order.
  return hash(decoder_->encoder().flat_weights()) * 1099511628211ull ^
         hash(decoder_->step().flat_weights());
}

}  // namespace dlbench::runner
