#include "engine/models/model_spec.h"

namespace dlbench::models {

const char* to_string(SampleUnit unit) {
  switch (unit) {
    case SampleUnit::kImages:
      return "images";
    case SampleUnit::kVolumes:
      return "volumes";
    case SampleUnit::kPairs:
      return "pairs";
    case SampleUnit::kTokens:
      return "tokens";
    case SampleUnit::kSequences:
      return "sequences";
  }
  return "samples";
}

std::int64_t samples_per_step(const ModelSpec& spec, const ModelConfig& config) {
  return spec.samples ? spec.samples(config) : config.batch;
}

}  // namespace dlbench::models
