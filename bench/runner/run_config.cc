#include "bench/runner/run_config.h"

#include "bench/telemetry/sampler.h"
#include "engine/core/error.h"

namespace dlbench::runner {

const char* to_string(nn::Mode mode) {
  return mode == nn::Mode::kTrain ? "train" : "infer";
}

nn::Mode parse_mode(const std::string& text) {
  if (text == "train") return nn::Mode::kTrain;
  if (text == "infer" || text == "inference") return nn::Mode::kInfer;
  throw Error(ErrorKind::kUsage, "unknown mode '" + text + "'", "use --mode train or --mode infer");
}

RunConfig validated(RunConfig c) {
  if (!c.batch) c.batch = c.mode == nn::Mode::kTrain ? kDefaultTrainBatch : kDefaultInferBatch;
  if (*c.batch < 1)
    throw Error(ErrorKind::kUsage, "--batch must be at least 1, not " + std::to_string(*c.batch),
                "e.g. --batch 32");
  if (c.steps < 1)
    throw Error(ErrorKind::kUsage, "--steps must be at least 1, not " + std::to_string(c.steps),
                "e.g. --steps 20");
  if (c.warmup_steps < 0)
    throw Error(ErrorKind::kUsage, "--warmup must not be negative", "e.g. --warmup 5");
  if (!(c.learning_rate >= 0) || !(c.momentum >= 0 && c.momentum < 1))
    throw Error(ErrorKind::kUsage, "--lr must be >= 0 and --momentum in [0, 1)",
                "e.g. --lr 0.01 --momentum 0.9");
  if (c.telemetry) telemetry::check_interval(c.telemetry_interval_s);
  if (c.seconds < 0)
    throw Error(ErrorKind::kUsage, "--seconds must be positive", "e.g. --seconds 30");
  if (c.profile_steps < 0)
    throw Error(ErrorKind::kUsage, "--profile-layers must not be negative",
                "e.g. --profile-layers 5");
  if (c.profile_steps > 0 && c.framework != "native")
    throw Error(ErrorKind::kUsage, "--profile-layers times dlbench's own engine, not a framework",
                "drop --framework, or --profile-layers");
  if (!(c.bucket_mb > 0))
    throw Error(ErrorKind::kUsage, "--bucket-mb must be positive", "e.g. --bucket-mb 25");
  if (c.launch == dist::LaunchMode::kThreads && c.gpus > 1 && c.device.type == DeviceType::kCpu)
    throw Error(ErrorKind::kUsage,
                "--gpus drives GPUs; data parallelism on CPUs runs one process "
                "per replica",
                "mpirun -np 2 dlbench run ... --device cpu --dist mpi");
  if (c.device.type == DeviceType::kCpu && c.precision != nn::Precision::kFp32)
    throw Error(ErrorKind::kUsage,
                std::string("precision ") + nn::to_string(c.precision) +
                    " needs a GPU backend; the CPU backend computes in fp32",
                "use --precision fp32 with --device cpu");
  return c;
}

}  // namespace dlbench::runner
