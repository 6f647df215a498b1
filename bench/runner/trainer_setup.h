// A run's configuration in the engine's terms: the model's configuration and the trainer's
// settings. Shared by the workload runner and the max-batch search's planner probes, so a probe
// plans exactly the trainer an attempt builds.
#pragma once

#include <cstdint>
#include <memory>

#include "bench/result/run_config.h"
#include "engine/dist/communicator.h"
#include "engine/models/model_spec.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

// The model at `batch` (input size and compute dtype from the configuration) on `data` (null:
// synthetic), resolved.
models::ModelConfig model_config(const models::ModelSpec& model, const result::RunConfig& config,
                                 std::int64_t batch,
                                 std::shared_ptr<const data::Dataset> data = nullptr);
// The model's default optimizer with the run's learning rate and momentum.
nn::TrainerConfig trainer_config(const models::ModelSpec& model, const result::RunConfig& config,
                                 dist::Communicator* communicator);
// An inference trainer of the trained model at `batch` (the rest of `trained_config` kept),
// holding `trained`'s weights and learned state (batch norm's running statistics): what the
// held-out evaluations score with, outside the measured steps.
std::unique_ptr<nn::Trainer> inference_twin(const models::ModelSpec& model,
                                            models::ModelConfig trained_config, std::int64_t batch,
                                            const result::RunConfig& config,
                                            const nn::Trainer& trained, backend::Backend& be);

}  // namespace dlbench::runner
