// Size arithmetic that cannot wrap: a batch whose tensors' element or byte counts do not fit in
// 64 bits is a usage error (exit 2), never a negative size handed to a kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/core/shape.h"

namespace dlbench {

[[noreturn]] inline void size_overflow(const std::string& what) {
  throw Error(ErrorKind::kUsage, what + " does not fit in 64 bits",
              "use a smaller batch or input size");
}

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what = "a size") {
  std::int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) size_overflow(what);
  return product;
}

inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* what = "a size") {
  std::size_t product;
  if (__builtin_mul_overflow(a, b, &product)) size_overflow(what);
  return product;
}

inline std::size_t checked_add(std::size_t a, std::size_t b, const char* what = "a size") {
  std::size_t sum;
  if (__builtin_add_overflow(a, b, &sum)) size_overflow(what);
  return sum;
}

// The bytes of a tensor of `shape` in `dtype`; Error(kUsage) when they cannot be represented.
inline std::size_t checked_bytes(const Shape& shape, DType dtype) {
  const std::int64_t n = shape.numel();  // checked itself
  return checked_mul(static_cast<std::size_t>(n), size_of(dtype), "the bytes of a tensor");
}

}  // namespace dlbench
