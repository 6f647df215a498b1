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
  mc.class_weights = config.class_weights;
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

std::unique_ptr<nn::Trainer> inference_twin(const models::ModelSpec& model,
                                            models::ModelConfig trained_config, std::int64_t batch,
                                            const result::RunConfig& config,
                                            const nn::Trainer& trained, backend::Backend& be) {
  trained_config.mode = Mode::kInfer;
  trained_config.batch = batch;
  nn::TrainerConfig tc = trainer_config(model, config, nullptr);
  tc.mode = Mode::kInfer;
  auto net = std::make_unique<nn::Trainer>(model.build(trained_config), be, tc);
  net->load_weights(trained.flat_weights());
  net->load_state(trained);  // inference normalizes by the running statistics
  return net;
}

}  // namespace dlbench::runner
