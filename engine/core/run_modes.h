// The words every floor uses to describe a run: training or inference, the precision policy,
// and how the replicas of a data-parallel job are launched. They live at the bottom so the
// results (bench/result), the store and the report can name a run without linking the engine.
#pragma once

#include <string>

#include "engine/core/dtype.h"

namespace dlbench {

enum class Mode { kTrain, kInfer };

const char* to_string(Mode mode);  // "train", "infer"

// Precision policy: fp32 strict (TF32 off), tf32, fp16 and bf16 mixed precision
// with fp32 master weights. The CPU backend computes in fp32 only.
enum class Precision { kFp32, kTf32, kFp16, kBf16 };

const char* to_string(Precision p);
// Throws Error(kUsage) naming the valid choices.
Precision parse_precision(const std::string& text);
// The dtype activations and compute copies of the weights are held in: f16/bf16 for mixed
// precision, f32 for fp32 and tf32 (TF32 is a math mode of f32 data, not a storage type).
DType compute_dtype(Precision p);

// One replica (no communicator); one process driving every listed local GPU, a thread per GPU;
// or one process per replica started by a launcher (mpirun, srun).
enum class LaunchMode { kSingle, kThreads, kMpi };

const char* to_string(LaunchMode mode);  // "single", "threads", "mpi"

}  // namespace dlbench
