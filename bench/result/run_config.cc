#include "bench/result/run_config.h"

namespace dlbench::result {

ConfigError::ConfigError(std::string field, const std::string& problem, std::string example)
    : Error(ErrorKind::kUsage, field + " " + problem, "e.g. " + field + " " + example),
      field_(std::move(field)),
      problem_(problem),
      example_(std::move(example)) {}

Mode parse_mode(const std::string& text) {
  if (text == "train") return Mode::kTrain;
  if (text == "infer" || text == "inference") return Mode::kInfer;
  throw ConfigError("mode", "must be train or infer, not '" + text + "'", "train");
}

std::string base_framework(const std::string& framework) {
  return framework.substr(0, framework.find('-'));
}

}  // namespace dlbench::result
