// The model registry: name -> a function that builds the static graph for a configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/nn/graph.h"

namespace dlbench::models {

struct ModelConfig {
  std::int64_t batch = 1;
  int input_size = 0;           // 0: the model's default (224 for ImageNet models)
  int width_divisor = 1;        // > 1 shrinks every channel count (tests: full depth, small width)
  std::int64_t classes = 0;     // 0: the model's default for the input size
  DType compute = DType::kF32;  // activations' dtype: compute_dtype() of the run's precision
};

struct ModelInfo {
  std::string name;
  std::string description;
  int default_input_size = 224;
  std::vector<int> input_sizes;  // the sizes the model accepts
  std::function<nn::Graph(const ModelConfig&)> build;
  std::function<std::int64_t(int input_size)> classes;
};

const std::vector<ModelInfo>& model_registry();
// Throws Error(kUsage) listing the models when the name is unknown.
// A string_view, not a const std::string&: a returned reference next to a temporary string
// argument trips GCC 13's -Wdangling-reference.
const ModelInfo& find_model(std::string_view name);
// Resolves input_size 0 to the default and checks that the model accepts the size.
ModelConfig resolve(const ModelInfo& model, ModelConfig config);

nn::Graph build_resnet50(const ModelConfig& config);
nn::Graph build_vgg16(const ModelConfig& config);

}  // namespace dlbench::models
