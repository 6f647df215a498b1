// A model that exists only in the engine test binary: registering it edits no central file
// (no registry list, no CLI help, no CMakeLists model list), which is the registry's promise.
// One Linear layer on 8 features, its loss on 3 classes; no size; 4 samples per batch row.
#include "engine/models/builder.h"
#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

nn::Graph build(const ModelConfig& config) {
  nn::Graph g(config.compute);
  Builder b(g);
  const ValueId x = g.add_input(
      {"features", {config.batch, 8}, config.compute, data::normal(0.0, 1.0), "probe features"});
  b.classifier_loss(b.linear("fc", x, 3), config.batch, 3);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "registry-probe";
  s.description = "a one-layer test model, registered in the test binary only";
  s.unit = SampleUnit::kTokens;
  s.default_train_batch = 5;
  s.default_infer_batch = 7;
  s.size = {"sequence length", "tokens", 0, {}};
  s.build = build;
  s.samples = [](const ModelConfig& c) { return 4 * c.batch; };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
