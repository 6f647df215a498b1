#include "engine/models/registry.h"

#include <algorithm>

#include "engine/core/error.h"

namespace dlbench::models {

const std::vector<ModelInfo>& model_registry() {
  static const std::vector<ModelInfo> models{
      {"resnet50",
       "ResNet-50 v1.5, ImageNet 224x224 (1000 classes); --input 32: CIFAR-10 variant",
       224,
       {224, 32},
       build_resnet50,
       [](int size) -> std::int64_t { return size == 32 ? 10 : 1000; }},
      {"vgg16",
       "VGG16, ImageNet 224x224 (1000 classes); --input 32 for small tests",
       224,
       {224, 32},
       build_vgg16,
       [](int size) -> std::int64_t { return size == 32 ? 10 : 1000; }},
  };
  return models;
}

const ModelInfo& find_model(std::string_view name) {
  std::string names;
  for (const ModelInfo& m : model_registry()) {
    if (m.name == name) return m;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  throw Error(ErrorKind::kUsage, "unknown model '" + std::string(name) + "'",
              "choose one of: " + names);
}

ModelConfig resolve(const ModelInfo& model, ModelConfig config) {
  if (config.input_size == 0) config.input_size = model.default_input_size;
  if (std::find(model.input_sizes.begin(), model.input_sizes.end(), config.input_size) ==
      model.input_sizes.end()) {
    std::string sizes;
    for (int s : model.input_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
    throw Error(ErrorKind::kUsage,
                model.name + " does not take --input " + std::to_string(config.input_size),
                "use one of: " + sizes);
  }
  if (config.batch < 1)
    throw Error(ErrorKind::kUsage,
                "--batch must be at least 1, not " + std::to_string(config.batch),
                "e.g. --batch 32");
  if (config.classes == 0) config.classes = model.classes(config.input_size);
  return config;
}

}  // namespace dlbench::models
