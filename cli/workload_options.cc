#include "cli/workload_options.h"

namespace dlbench::cli {

void add_workload_options(CLI::App& cmd, WorkloadOptions& o, const WorkloadHelp& help) {
  cmd.add_option("model", o.model, "Model: resnet50, vgg16")->required();
  cmd.add_option("--mode", o.mode, "train or infer")->capture_default_str();
  cmd.add_option("--batch", o.batch, help.batch);
  cmd.add_option("--precision", o.precision, "fp32, tf32, fp16 or bf16")->capture_default_str();
  cmd.add_option("--input", o.input, help.input);
  cmd.add_option("--warmup", o.warmup, help.warmup)->capture_default_str();
  cmd.add_option("--steps", o.steps, help.steps)->capture_default_str();
  cmd.add_option("--seconds", o.seconds, help.seconds);
  cmd.add_flag("--telemetry,!--no-telemetry", o.telemetry, help.telemetry);
  cmd.add_option("--bucket-mb", o.bucket_mb,
                 "Gradient all-reduce bucket size in MiB (data-parallel runs)")
      ->capture_default_str();
  cmd.add_flag("--graphs,!--no-graphs", o.graphs,
               "Replay each step as CUDA graphs after the first (default on; GPUs only)");
}

void apply_workload_options(const WorkloadOptions& o, result::RunConfig& config) {
  config.model = o.model;
  config.mode = result::parse_mode(o.mode);
  config.batch = o.batch;
  config.precision = parse_precision(o.precision);
  if (o.input && *o.input < 1)
    throw result::ConfigError(
        "input", "must be a positive size in pixels, not " + std::to_string(*o.input), "224");
  config.input_size = o.input.value_or(0);
  config.warmup_steps = o.warmup;
  config.steps = o.steps;
  config.seconds = o.seconds;
  config.bucket_mb = o.bucket_mb;
  config.telemetry = o.telemetry;
  config.graphs = o.graphs;
}

}  // namespace dlbench::cli
