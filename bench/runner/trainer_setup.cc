#include "bench/runner/trainer_setup.h"

#include "engine/models/registry.h"

namespace dlbench::runner {

models::ModelConfig model_config(const models::ModelSpec& model, const result::RunConfig& config,
                                 std::int64_t batch, std::shared_ptr<const data::Dataset> data) {
  models::ModelConfig mc;
  mc.batch = batch;
  mc.size = config.input_size;
  mc.compute = compute_dtype(config.precision);
  mc.mode = config.mode;
  mc.seed = config.seed;
  mc.data = std::move(data);
  return models::resolve(model, mc);
}

nn::TrainerConfig trainer_config(const models::ModelSpec& model, const result::RunConfig& config,
                                 dist::Communicator* communicator) {
  nn::TrainerConfig nc;
  nc.mode = config.mode;
  nc.precision = config.precision;
  nc.seed = config.seed;
  nc.optimizer = model.default_optimizer;
  nc.optimizer.learning_rate = config.learning_rate;
  nc.optimizer.momentum = config.momentum;
  nc.communicator = communicator;
  nc.device_graphs = config.graphs;
  nc.fusion = config.fusion ? nn::Fusion::kOn : nn::Fusion::kOff;
  nc.bucket_bytes = static_cast<std::size_t>(config.bucket_mb * 1024 * 1024);
  return nc;
}

}  // namespace dlbench::runner
