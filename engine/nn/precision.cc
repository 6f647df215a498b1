#include "engine/nn/precision.h"

#include "engine/core/error.h"

namespace dlbench::nn {

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

}  // namespace dlbench::nn
