// Element types of tensors. CPU computes in f32; the CUDA backend adds f16/bf16 compute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlbench {

enum class DType { kF32, kF16, kBF16, kI32, kI64 };

constexpr std::size_t size_of(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
  }
  return 0;
}

const char* to_string(DType t);

}  // namespace dlbench
