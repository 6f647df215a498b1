#include "engine/models/registry.h"

#include <algorithm>

#include "engine/core/error.h"

namespace dlbench::models {
namespace {

std::string list(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

}  // namespace

ModelRegistry& ModelRegistry::instance() {
  static ModelRegistry registry;
  return registry;
}

void ModelRegistry::add(ModelSpec spec) {
  for (const ModelSpec& s : specs_)
    DLBENCH_CHECK(s.name != spec.name, "two model files register '" + spec.name + "'");
  DLBENCH_CHECK(static_cast<bool>(spec.build), "model '" + spec.name + "' has no build function");
  specs_.push_back(std::move(spec));
}

const ModelSpec& ModelRegistry::find(std::string_view name) const {
  for (const ModelSpec& s : specs_)
    if (s.name == name) return s;
  throw Error(ErrorKind::kUsage, "unknown model '" + std::string(name) + "'",
              "choose one of: " + model_names());
}

std::vector<const ModelSpec*> ModelRegistry::all() const {
  std::vector<const ModelSpec*> out;
  for (const ModelSpec& s : specs_) out.push_back(&s);
  std::sort(out.begin(), out.end(),
            [](const ModelSpec* a, const ModelSpec* b) { return a->name < b->name; });
  return out;
}

const ModelSpec& find_model(std::string_view name) {
  return ModelRegistry::instance().find(name);
}

std::string model_names() {
  std::string names;
  for (const ModelSpec* s : ModelRegistry::instance().all())
    names += (names.empty() ? "" : ", ") + s->name;
  return names;
}

ModelConfig resolve(const ModelSpec& spec, ModelConfig config) {
  const SizeOption& size = spec.size;
  if (config.size == 0) config.size = size.default_value;
  if (size.allowed.empty()) {
    if (config.size != 0)
      throw Error(ErrorKind::kUsage, spec.name + " takes no " + size.what,
                  "leave the " + size.what + " unset");
  } else if (std::find(size.allowed.begin(), size.allowed.end(), config.size) ==
             size.allowed.end()) {
    throw Error(ErrorKind::kUsage,
                spec.name + " does not take " + size.what + " " + std::to_string(config.size),
                "use one of: " + list(size.allowed) + " " + size.unit);
  }
  if (config.batch < 1)
    throw Error(ErrorKind::kUsage,
                "the batch must be at least 1, not " + std::to_string(config.batch),
                "use a batch of 32, say");
  if (!config.class_weights.empty() && !spec.takes_class_weights)
    throw Error(ErrorKind::kUsage, spec.name + " takes no class weights",
                "class weights are for the segmentation models' per-pixel cross-entropy");
  return config;
}

std::string data_formats() {
  // Models of one format share an entry: "word2vec, word2vec-d300: plain text ...".
  std::vector<std::pair<std::string, std::string>> formats;  // (format, names)
  for (const ModelSpec* m : ModelRegistry::instance().all()) {
    if (!m->read_data) continue;
    auto same = std::find_if(formats.begin(), formats.end(),
                             [&](const auto& f) { return f.first == m->data_format; });
    if (same == formats.end())
      formats.emplace_back(m->data_format, m->name);
    else
      same->second += ", " + m->name;
  }
  std::string text;
  for (const auto& [format, names] : formats)
    text += (text.empty() ? "" : "; ") + names + ": " + format;
  return text;
}

std::shared_ptr<const data::Dataset> read_data(const ModelSpec& spec, const std::string& path) {
  if (!spec.read_data) {
    const std::string readers = data_formats();
    throw Error(ErrorKind::kUsage, spec.name + " reads no data file yet: it runs on synthetic data",
                "leave the data file unset" +
                    (readers.empty() ? std::string() : " (models that read one: " + readers + ")"));
  }
  return spec.read_data(path);
}

}  // namespace dlbench::models
