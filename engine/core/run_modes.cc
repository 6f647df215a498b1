#include "engine/core/run_modes.h"

#include "engine/core/error.h"

namespace dlbench {

const char* to_string(Mode mode) {
  return mode == Mode::kTrain ? "train" : "infer";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
  }
  return "?";
}

Precision parse_precision(const std::string& text) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
    if (text == to_string(p)) return p;
  throw Error(ErrorKind::kUsage, "unknown precision '" + text + "'",
              "use one of fp32, tf32, fp16, bf16");
}

DType compute_dtype(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return DType::kF16;
    case Precision::kBf16:
      return DType::kBF16;
    default:
      return DType::kF32;
  }
}

const char* to_string(LaunchMode mode) {
  switch (mode) {
    case LaunchMode::kSingle:
      return "single";
    case LaunchMode::kThreads:
      return "threads";
    case LaunchMode::kMpi:
      return "mpi";
  }
  return "?";
}

}  // namespace dlbench
