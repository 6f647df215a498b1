// Precision policy of a run (DESIGN.md): fp32 strict (TF32 off), tf32, fp16 and bf16 mixed
// precision with fp32 master weights. The CPU backend computes in fp32 only.
#pragma once

#include <string>

namespace dlbench::nn {

enum class Precision { kFp32, kTf32, kFp16, kBf16 };

const char* to_string(Precision p);
// Throws Error(kUsage) naming the valid choices.
Precision parse_precision(const std::string& text);

}  // namespace dlbench::nn
