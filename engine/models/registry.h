// The model registry. Each model file registers its spec at static-initialization time with
// DLBENCH_REGISTER_MODEL, so adding a model edits no central list, CLI help or CMakeLists.
//
// The models library is a static archive that nothing references by symbol, so a plain link
// would drop every registrar: link `dlbench_models_all` (engine/models/CMakeLists.txt), which
// takes the whole archive.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/models/model_spec.h"

namespace dlbench::models {

class ModelRegistry {
 public:
  static ModelRegistry& instance();
  // A second spec with the same name is an internal error: two files claim one model.
  void add(ModelSpec spec);
  // Throws Error(kUsage) naming the known models when the name is unknown.
  const ModelSpec& find(std::string_view name) const;
  // Sorted by name, so help texts and listings do not depend on the link order.
  std::vector<const ModelSpec*> all() const;

 private:
  ModelRegistry() = default;
  std::vector<ModelSpec> specs_;
};

// A string_view, not a const std::string&: a returned reference next to a temporary string
// argument trips GCC 13's -Wdangling-reference.
const ModelSpec& find_model(std::string_view name);
// "resnet50, vgg16": for help texts and errors.
std::string model_names();

// Resolves size 0 to the spec's default and checks the size and the batch; the errors name
// the setting, not a flag, as the engine's errors do.
ModelConfig resolve(const ModelSpec& spec, ModelConfig config);

// What the models that read data files read, for help texts and errors:
// "ncf: MovieLens ratings (...); word2vec, word2vec-d300, word2vec-neg64: plain text (...)".
std::string data_formats();

// The model's reader on `path`; Error(kUsage) naming the setting when the model reads no files.
std::shared_ptr<const data::Dataset> read_data(const ModelSpec& spec, const std::string& path);

struct ModelRegistrar {
  explicit ModelRegistrar(ModelSpec (*make)()) { ModelRegistry::instance().add(make()); }
};

}  // namespace dlbench::models

// At file scope in a model's .cc: DLBENCH_REGISTER_MODEL(resnet50_spec), where
// `ModelSpec resnet50_spec()` fills the spec.
#define DLBENCH_MODEL_CAT_(a, b) a##b
#define DLBENCH_MODEL_NAME_(line) DLBENCH_MODEL_CAT_(dlbench_model_registrar_, line)
#define DLBENCH_REGISTER_MODEL(make_spec)                                        \
  static const ::dlbench::models::ModelRegistrar DLBENCH_MODEL_NAME_(__LINE__) { \
    make_spec                                                                    \
  }
