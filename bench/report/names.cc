#include "bench/report/names.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/json_text.h"

namespace dlbench::report {
namespace {

using nlohmann::json;

const char* const kPrecisionOrder[] = {"fp32", "tf32", "fp16", "bf16"};

std::string text_at(const json& env, const char* section, const char* key) {
  if (!env.is_object() || !env.contains(section) || !env[section].is_object()) return "";
  const json& v = env[section].value(key, json());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return dump_json(v);
  return "";
}

// What tells two machines with the same hardware name apart, most telling first.
std::vector<std::string> distinguishing_facts(const store::MachineRecord& m) {
  const json& env = m.environment;
  std::vector<std::string> facts;
  auto add = [&](const std::string& prefix, const std::string& value) {
    facts.push_back(value.empty() ? "" : prefix + value);
  };
  add("host ", m.hostname);
  add("driver ", text_at(env, "gpu_software", "driver_version"));
  add("CUDA ", text_at(env, "gpu_software", "cuda_runtime"));
  add("cuDNN ", text_at(env, "gpu_software", "cudnn"));
  add("kernel ", text_at(env, "host", "kernel"));
  std::string build = text_at(env, "dlbench", "version");
  std::string hash = text_at(env, "dlbench", "git_hash");
  add("dlbench ", build + (hash.empty() ? "" : " " + hash.substr(0, 12)));
  return facts;
}

}  // namespace

std::string precision_label(const std::string& p) {
  if (p == "fp32") return "FP32 (strict, no TF32)";
  if (p == "tf32") return "TF32";
  if (p == "fp16") return "FP16 (mixed)";
  if (p == "bf16") return "BF16 (mixed)";
  return p;
}

int precision_rank(const std::string& p) {
  for (int i = 0; i < 4; ++i)
    if (p == kPrecisionOrder[i]) return i;
  return 4;
}

std::string mode_label(const std::string& mode) {
  if (mode == "train") return "training";
  if (mode == "infer") return "inference";
  return mode;
}

std::string model_label(const std::string& model) {
  static const std::map<std::string, std::string> labels = {
      {"resnet50", "ResNet-50"},
      {"resnet50-cifar", "ResNet-50 (CIFAR)"},
      {"vgg16", "VGG16"},
      {"ncf", "NCF"},
      {"word2vec", "Word2Vec"},
      {"word2vec-d300", "Word2Vec (d300)"},
      {"word2vec-neg64", "Word2Vec (64 negatives)"},
      {"unet", "U-Net"},
      {"unet3d", "3D U-Net"},
      {"bert-base", "BERT-Base"},
      {"bert-large", "BERT-Large"},
      {"transformer", "Transformer (big)"},
      {"gnmt", "GNMT v2"}};
  const auto found = labels.find(model);
  return found != labels.end() ? found->second : model;
}

std::string throughput_unit(const store::RunRecord& r) {
  const json& unit = r.result.is_object() ? r.result.value("sample_unit", json()) : json();
  if (unit.is_string() && !unit.get<std::string>().empty()) return unit.get<std::string>() + "/s";
  // Runs stored before the unit was: the image models were the only ones.
  return r.model.rfind("resnet", 0) == 0 || r.model.rfind("vgg", 0) == 0 ? "images/s" : "samples/s";
}

std::string machine_name(const store::MachineRecord& m) {
  const json& env = m.environment;
  std::string cpu = text_at(env, "host", "cpu_model");
  if (cpu.empty()) cpu = "CPU";
  std::string cores = text_at(env, "host", "cores");
  if (!cores.empty()) cpu += " (" + cores + (cores == "1" ? " core)" : " cores)");
  // GPU models with their counts, in the order the machine lists them.
  std::vector<std::pair<std::string, int>> gpus;
  if (env.is_object() && env.contains("gpus") && env["gpus"].is_array())
    for (const json& g : env["gpus"]) {
      std::string name = g.is_object() ? g.value("name", std::string("GPU")) : "GPU";
      auto it = std::find_if(gpus.begin(), gpus.end(), [&](auto& p) { return p.first == name; });
      if (it == gpus.end())
        gpus.emplace_back(name, 1);
      else
        ++it->second;
    }
  if (gpus.empty()) return cpu + ", no GPU";
  std::string text;
  for (const auto& [name, count] : gpus)
    text += (text.empty() ? "" : " + ") + std::to_string(count) + "x " + name;
  return text + " \xC2\xB7 " + cpu;
}

std::map<std::int64_t, std::string> machine_names(const std::vector<store::MachineRecord>& ms) {
  std::map<std::int64_t, std::string> names;
  std::map<std::string, std::vector<const store::MachineRecord*>> by_name;
  for (const store::MachineRecord& m : ms) by_name[machine_name(m)].push_back(&m);
  for (const auto& [name, group] : by_name) {
    if (group.size() == 1) {
      names[group[0]->id] = name;
      continue;
    }
    // The first fact on which every machine of the group differs from the others.
    std::vector<std::vector<std::string>> facts;
    for (const store::MachineRecord* m : group) facts.push_back(distinguishing_facts(*m));
    std::size_t pick = facts[0].size();
    for (std::size_t f = 0; f < facts[0].size() && pick == facts[0].size(); ++f) {
      std::vector<std::string> values;
      for (const auto& fs : facts) values.push_back(fs[f]);
      std::sort(values.begin(), values.end());
      bool distinct = std::adjacent_find(values.begin(), values.end()) == values.end();
      if (distinct && !values.front().empty()) pick = f;
    }
    for (std::size_t i = 0; i < group.size(); ++i)
      names[group[i]->id] =
          name + " (" +
          (pick < facts[i].size() ? facts[i][pick] : "machine " + std::to_string(group[i]->id)) +
          ")";
  }
  return names;
}

std::map<std::int64_t, std::string> machine_short_names(
    const std::vector<store::MachineRecord>& ms) {
  std::map<std::int64_t, std::string> names = machine_names(ms);
  if (ms.size() < 2) return names;
  const std::string dot = " \xC2\xB7 ";
  std::set<std::string> bases, gpu_parts;
  for (const store::MachineRecord& m : ms) {
    const std::string base = machine_name(m);
    bases.insert(base);
    gpu_parts.insert(base.substr(0, base.find(dot)));
  }
  for (const store::MachineRecord& m : ms) {
    const std::string base = machine_name(m);
    std::string& name = names[m.id];
    if (gpu_parts.size() == ms.size())
      name = base.substr(0, base.find(dot));
    else if (bases.size() == 1 && name.size() > base.size() + 3)  // "BASE (what differs)"
      name = name.substr(base.size() + 2, name.size() - base.size() - 3);
  }
  return names;
}

}  // namespace dlbench::report
