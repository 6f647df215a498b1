#include "cli/workload_options.h"

#include <functional>
#include <stdexcept>

#include "engine/models/registry.h"

namespace dlbench::cli {
namespace {

// One fact per registered model, said once when every model shares it ("128 train, 64 infer"),
// else per model ("resnet50 128 train, 64 infer; ncf ..."). The registry, not this file, knows
// the models.
std::string per_model(const std::function<std::string(const models::ModelSpec&)>& fact) {
  std::string shared, each;
  bool same = true;
  for (const models::ModelSpec* m : models::ModelRegistry::instance().all()) {
    const std::string text = fact(*m);
    if (text.empty()) continue;
    if (shared.empty()) shared = text;
    same = same && text == shared;
    each += (each.empty() ? "" : "; ") + m->name + " " + text;
  }
  return same ? shared : each;
}

std::string batch_defaults() {
  return per_model([](const models::ModelSpec& m) {
    return std::to_string(m.default_train_batch) + " train, " +
           std::to_string(m.default_infer_batch) + " infer";
  });
}

std::string sizes() {
  return per_model([](const models::ModelSpec& m) {
    std::string text;
    for (int v : m.size.allowed)
      text += (text.empty() ? "" : ", ") + std::to_string(v) +
              (v == m.size.default_value ? " (default)" : "");
    return text.empty() ? text : text + " " + m.size.unit;
  });
}

}  // namespace

void add_workload_options(CLI::App& cmd, WorkloadOptions& o, const WorkloadHelp& help) {
  cmd.add_option("model", o.model, "Model: " + models::model_names())->required();
  cmd.add_option("--mode", o.mode, "train or infer")->capture_default_str();
  cmd.add_option("--batch", o.batch,
                 std::string(help.batch) + " (default: " + batch_defaults() + ")");
  cmd.add_option("--precision", o.precision, "fp32, tf32, fp16 or bf16")->capture_default_str();
  cmd.add_option("--input", o.input, std::string(help.input) + ": " + sizes());
  cmd.add_option("--warmup", o.warmup, help.warmup)->capture_default_str();
  cmd.add_option("--steps", o.steps, help.steps)->capture_default_str();
  cmd.add_option("--seconds", o.seconds, help.seconds);
  cmd.add_flag("--telemetry,!--no-telemetry", o.telemetry, help.telemetry);
  cmd.add_option("--bucket-mb", o.bucket_mb,
                 "Gradient all-reduce bucket size in MiB (data-parallel runs)")
      ->capture_default_str();
  cmd.add_flag("--graphs,!--no-graphs", o.graphs,
               "Replay each step as CUDA graphs after the first (default on; GPUs only)");
  cmd.add_option("--beam", o.beam,
                 "Translation decoding (gnmt --mode infer, or run's --test-data): hypotheses kept "
                 "per sentence, 1 to 8 (1: greedy decoding)")
      ->capture_default_str();
  cmd.add_flag(
      "--fusion,!--no-fusion", o.fusion,
      "Fuse ops where the backend can, e.g. a ReLU into the matmul before it (default on)");
}

void apply_workload_options(const WorkloadOptions& o, result::RunConfig& config) {
  config.model = o.model;
  config.mode = result::parse_mode(o.mode);
  config.batch = o.batch;
  config.precision = parse_precision(o.precision);
  if (o.input && *o.input < 1)
    throw result::ConfigError(
        "input",
        "must be a positive size (pixels, voxels or tokens), not " + std::to_string(*o.input),
        "224");
  config.input_size = o.input.value_or(0);
  config.warmup_steps = o.warmup;
  config.steps = o.steps;
  config.seconds = o.seconds;
  config.bucket_mb = o.bucket_mb;
  config.telemetry = o.telemetry;
  config.graphs = o.graphs;
  config.fusion = o.fusion;
  config.beam = o.beam;
}

void add_class_weights_option(CLI::App& cmd, std::optional<std::string>& text,
                              const std::string& help_prefix) {
  cmd.add_option("--class-weights", text,
                 help_prefix +
                     "Weigh the per-pixel cross-entropy of the segmentation models (unet, unet3d) "
                     "by class: one weight per class, the background's first, as PyTorch's "
                     "cross_entropy(weight=...) does (default: every class 1)")
      ->type_name("W0,W1,...");
}

std::vector<float> parse_class_weights(const std::string& text) {
  std::vector<float> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    std::size_t used = 0;
    float v = 0;
    try {
      v = std::stof(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      throw result::ConfigError("class-weights",
                                "must be numbers separated by commas, not '" + text + "'", "1,2,4");
    out.push_back(v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace dlbench::cli
