// One benchmark run: a model, a mode, a batch, a precision, a device, how long to measure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/result/launch.h"
#include "engine/core/error.h"
#include "engine/core/run_modes.h"

namespace dlbench::result {

// Warm-up and measured steps of a run when none are given.
constexpr int kDefaultWarmupSteps = 5;
constexpr int kDefaultMeasuredSteps = 20;

struct RunConfig {
  std::string model = "resnet50";
  // "native" (dlbench's engine) or a peer framework run by bench/peers: "pytorch", "jax", or
  // a variant of one, named framework-variant ("pytorch-compile").
  std::string framework = "native";
  Mode mode = Mode::kTrain;
  std::optional<std::int64_t> batch;  // unset: the model spec's default for the mode
  Precision precision = Precision::kFp32;
  // The device, or the replicas of a data-parallel run: kThreads drives cuda:0..gpus-1 from
  // this process, kMpi is one rank of a job started by mpirun/srun. `batch` is per replica;
  // the global batch is batch x replicas.
  Launch launch;
  double bucket_mb = 25.0;  // gradient all-reduce bucket size
  // Replay steps as CUDA graphs after the first (nn::TrainerConfig::device_graphs).
  bool graphs = true;
  // Rewrite the graph with the engine's fusion passes before planning it (nn::Fusion).
  bool fusion = true;
  int input_size = 0;  // 0: the model's default
  // A data file the model reads (ModelSpec::read_data): its batches, and sizes where the model
  // takes them from the data. Empty: synthetic data.
  std::string data;
  // A translation model's test set (sentence pairs as `data` holds them): after training on
  // `data`, its sources are translated and scored by BLEU against its targets. Empty: none.
  std::string test_data;
  int warmup_steps = kDefaultWarmupSteps;
  int steps = kDefaultMeasuredSteps;
  double seconds = 0;  // > 0: measure for this long instead of a step count
  std::uint64_t seed = 42;
  // SGD with momentum, the work per step of the PyTorch peer. Its lr of 0.01 sends a fixed
  // synthetic batch of VGG16 at batch 4 to NaN within three steps; 0.001 keeps every model's
  // loss finite, and the learning rate does not change the work or the time of a step.
  float learning_rate = 0.001f;
  float momentum = 0.9f;
  // One weight per class for a segmenter's per-pixel cross-entropy (ModelSpec::
  // takes_class_weights), as PyTorch's cross_entropy(weight=...) weighs; empty: all 1.
  std::vector<float> class_weights;
  // A translation model's inference (ModelSpec::build_decoding): hypotheses kept per sentence,
  // 1 decoding greedily, up to nn's BeamParams::kMaxBeam.
  int beam = 1;
  // The telemetry sampler around the measured phase (process tree, system, every GPU).
  bool telemetry = true;
  double telemetry_interval_s = 0.5;
  // > 0: after the measured steps, this many extra steps with a device-timer mark around every
  // layer and part (bench/runner/layer_profiler.h); never inside the measured window.
  int profile_steps = 0;
  // Whole measurements of this configuration (bench/result/repeats.h): the result is their
  // median, with their spread.
  int repeat = 1;
  // > 0: the device's allocator refuses to hold more than this (DeviceAllocator::set_limit), as
  // if it had only this much memory; dlbench maxbatch --memory-limit. 0: the device's own.
  std::size_t memory_limit_bytes = 0;
};

// Bounds on what a user may ask for. Beyond them no run is meaningful, and within them no size
// product in the engine can overflow (a batch's memory is then a resource question, exit 3).
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;
constexpr int kMaxSteps = 10'000'000;
constexpr double kMaxSeconds = 7 * 24 * 3600.0;
constexpr double kMaxBucketMb = 1024 * 1024.0;

// A configuration value that cannot run, named by its field: the command line's flag without
// "--" ("batch", "lr", "bucket-mb") and a suite file's key. The command line says
// "--batch must be ...", a suite "quick.toml:7: batch must be ...".
class ConfigError : public Error {
 public:
  ConfigError(std::string field, const std::string& problem, std::string example);
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }  // "must be at least 1, not 0"
  const std::string& example() const { return example_; }  // "32"

 private:
  std::string field_;
  std::string problem_;
  std::string example_;
};

Mode parse_mode(const std::string& text);  // ConfigError on anything but train/infer

// The framework a framework name belongs to: "pytorch" for its variant "pytorch-compile"; its
// worker runs the variant, and its library version is the variant's.
std::string base_framework(const std::string& framework);

}  // namespace dlbench::result
