#include "bench/runner/validated_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "bench/telemetry/sampler.h"
#include "engine/models/registry.h"

namespace dlbench::runner {
namespace {

std::string number(double v) {
  std::ostringstream text;
  text.precision(12);
  text << v;
  return text.str();
}

void require(bool ok, const char* field, const std::string& problem, const char* example) {
  if (!ok) throw result::ConfigError(field, problem, example);
}

void in_range(std::int64_t value, std::int64_t low, std::int64_t high, const char* field,
              const char* example) {
  require(value >= low && value <= high, field,
          "must be from " + std::to_string(low) + " to " + std::to_string(high) + ", not " +
              std::to_string(value),
          example);
}

// NaN fails every comparison, so `!(v >= low)` catches it with the out-of-range values.
void finite_in_range(double value, double low, double high, const char* field,
                     const char* example) {
  require(std::isfinite(value) && value >= low && value <= high, field,
          "must be a finite number from " + number(low) + " to " + number(high) + ", not " +
              number(value),
          example);
}

void check_size(const models::ModelSpec& model, const result::RunConfig& c) {
  if (c.input_size == 0) return;
  const models::SizeOption& size = model.size;
  if (size.allowed.empty())
    throw Error(ErrorKind::kUsage, c.model + " takes no " + size.what,
                "leave the input size unset for " + c.model);
  if (std::find(size.allowed.begin(), size.allowed.end(), c.input_size) != size.allowed.end())
    return;
  std::string list;
  for (int s : size.allowed) list += (list.empty() ? "" : ", ") + std::to_string(s);
  throw result::ConfigError(
      "input",
      "of " + c.model + " must be one of " + list + ", not " + std::to_string(c.input_size),
      std::to_string(size.default_value).c_str());
}

// A data file is read when the run starts; here only what is cheap to know: that the model
// reads files, that the engine (not a peer) runs, and that the file opens.
void check_data(const models::ModelSpec& model, const result::RunConfig& c) {
  if (c.data.empty()) return;
  if (!model.read_data) models::read_data(model, c.data);  // throws, naming the models that do
  if (c.framework != "native")
    throw Error(ErrorKind::kUsage,
                "--data is read by dlbench's own engine; the framework peers run on synthetic "
                "data only",
                "drop --framework, or --data");
  if (!std::ifstream(c.data))
    throw result::ConfigError("data", "cannot read " + c.data, "ml-1m/ratings.dat");
}

// A test set is scored after training on real data, by a model that translates.
void check_test_data(const models::ModelSpec& model, const result::RunConfig& c) {
  if (c.test_data.empty()) return;
  if (!model.build_decoding)
    throw Error(
        ErrorKind::kUsage,
        "--test-data is a translation model's test set (gnmt); " + c.model + " translates nothing",
        "drop --test-data");
  if (c.framework != "native")
    throw Error(ErrorKind::kUsage,
                "--test-data is translated by dlbench's own engine; the framework peers run on "
                "synthetic data only",
                "drop --framework, or --test-data");
  if (c.mode != Mode::kTrain || c.data.empty())
    throw Error(ErrorKind::kUsage,
                "--test-data scores what a training run on real data learned: it needs --mode "
                "train and --data",
                "dlbench run " + c.model + " --data train.ids --test-data test.ids");
  if (!std::ifstream(c.test_data))
    throw result::ConfigError("test-data", "cannot read " + c.test_data, "newstest2014.ids");
}

}  // namespace

result::RunConfig validated(result::RunConfig c) {
  const models::ModelSpec& model = models::find_model(c.model);  // names the known ones
  if (!c.batch) c.batch = default_batch(c);
  check_size(model, c);
  in_range(*c.batch, 1, result::kMaxBatch, "batch", "32");
  in_range(c.steps, 1, result::kMaxSteps, "steps", "20");
  in_range(c.warmup_steps, 0, result::kMaxSteps, "warmup", "5");
  in_range(c.profile_steps, 0, result::kMaxSteps, "profile-layers", "5");
  finite_in_range(c.seconds, 0, result::kMaxSeconds, "seconds", "30");
  require(std::isfinite(c.learning_rate) && c.learning_rate >= 0, "lr",
          "must be a finite number >= 0, not " + number(c.learning_rate), "0.01");
  require(c.momentum >= 0 && c.momentum < 1, "momentum",
          "must be from 0 up to (not including) 1, not " + number(c.momentum), "0.9");
  if (!c.class_weights.empty()) {
    require(model.takes_class_weights, "class-weights",
            "is for the segmentation models (unet, unet3d); " + c.model + " takes none", "1,2,4");
    bool any = false;
    for (float w : c.class_weights) {
      require(std::isfinite(w) && w >= 0, "class-weights",
              "must be finite numbers >= 0, not " + number(w), "1,2,4");
      any = any || w > 0;
    }
    require(any, "class-weights", "must not all be 0 (no pixel would count)", "1,2,4");
  }
  require(std::isfinite(c.bucket_mb) && c.bucket_mb > 0 && c.bucket_mb <= result::kMaxBucketMb,
          "bucket-mb",
          "must be a finite number above 0 and at most " + number(result::kMaxBucketMb) + ", not " +
              number(c.bucket_mb),
          "25");
  telemetry::check_interval(c.telemetry_interval_s);  // also with telemetry off: a typo is a typo
  if (c.profile_steps > 0 && c.framework != "native")
    throw Error(ErrorKind::kUsage, "--profile-layers times dlbench's own engine, not a framework",
                "drop --framework, or --profile-layers");
  in_range(c.beam, 1, 8, "beam", "5");
  // A beam searches a translation model's inference, or the translations of a test set.
  if (c.beam > 1 && !(model.build_decoding && (c.mode == Mode::kInfer || !c.test_data.empty())))
    throw result::ConfigError("beam",
                              "searches only a translation model's inference (gnmt --mode "
                              "infer) or its --test-data, not " +
                                  c.model + " " + to_string(c.mode),
                              "1");
  if (c.profile_steps > 0 && c.mode == Mode::kInfer && model.build_decoding)
    throw Error(ErrorKind::kUsage,
                "--profile-layers does not time decoding yet (" + c.model +
                    " inference translates one position at a time)",
                "profile its training: --mode train");
  check_data(model, c);
  check_test_data(model, c);
  if (c.launch.mode == LaunchMode::kThreads && c.launch.gpus > 1 &&
      c.launch.device.type == DeviceType::kCpu)
    throw Error(ErrorKind::kUsage,
                "--gpus drives GPUs; data parallelism on CPUs runs one process "
                "per replica",
                "mpirun -np 2 dlbench run ... --device cpu --dist mpi");
  // A ConfigError, so the CLI hints at its flag and a suite at its key.
  if (c.launch.device.type == DeviceType::kCpu && c.precision != Precision::kFp32)
    throw result::ConfigError("precision",
                              std::string(to_string(c.precision)) +
                                  " needs a GPU backend; the CPU backend computes in fp32",
                              "fp32");
  return c;
}

std::int64_t default_batch(const result::RunConfig& c) {
  const models::ModelSpec& model = models::find_model(c.model);
  return c.mode == Mode::kTrain ? model.default_train_batch : model.default_infer_batch;
}

}  // namespace dlbench::runner
