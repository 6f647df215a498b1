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
    case SampleUnit::kSentences:
      return "sentences";
  }
  return "samples";
}

std::int64_t samples_per_step(const ModelSpec& spec, const ModelConfig& config) {
  return spec.samples ? spec.samples(config) : config.batch;
}

SampleUnit sample_unit(const ModelSpec& spec, Mode mode) {
  return mode == Mode::kInfer && spec.build_decoding ? SampleUnit::kSentences : spec.unit;
}

}  // namespace dlbench::models
