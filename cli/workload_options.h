// The flags that describe one workload (model, mode, batch, precision, input, how long to
// measure, telemetry, all-reduce buckets, CUDA graphs), shared by dlbench run and dlbench scale.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "bench/result/run_config.h"

namespace dlbench::cli {

struct WorkloadOptions {
  std::string model;
  std::string mode = "train";
  std::optional<std::int64_t> batch;
  std::string precision;     // the command's default
  std::optional<int> input;  // unset: the model's default
  int warmup = result::kDefaultWarmupSteps;
  int steps = result::kDefaultMeasuredSteps;
  double seconds = 0;
  double bucket_mb = result::RunConfig{}.bucket_mb;
  bool telemetry = true;
  bool graphs = true;
  bool fusion = true;
  int beam = 1;
};

// Help texts that differ between the commands.
struct WorkloadHelp {
  const char* batch;
  const char* input;
  const char* warmup;
  const char* steps;
  const char* seconds;
  const char* telemetry;
};

void add_workload_options(CLI::App& cmd, WorkloadOptions& options, const WorkloadHelp& help);
// Copies the options into config; Error(kUsage) for an unknown mode or precision.
void apply_workload_options(const WorkloadOptions& options, result::RunConfig& config);

// --class-weights W0,W1,... (run, compare): the text as given, for parse_class_weights; the help
// begins with `help_prefix` ("With --frameworks: ").
void add_class_weights_option(CLI::App& cmd, std::optional<std::string>& text,
                              const std::string& help_prefix = "");
// "1,2,4" -> {1, 2, 4}; anything else is a ConfigError naming --class-weights (validated()
// checks the values themselves).
std::vector<float> parse_class_weights(const std::string& text);

}  // namespace dlbench::cli
