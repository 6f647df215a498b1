// The shape and dtype checks the Backend's public entry points share (backend.cc and the
// backend_*.cc files beside it): each throws dlbench::Error naming the op and the operand.
#pragma once

#include <string>

#include "engine/core/error.h"
#include "engine/core/tensor.h"

namespace dlbench::backend {

inline constexpr DType kF32 = DType::kF32;

inline void check(const Tensor& t, const Shape& shape, DType dtype, const char* op,
                  const char* what) {
  DLBENCH_CHECK(t.defined(), std::string(op) + ": " + what + " is not allocated");
  check_shape(t, shape, op, what);
  check_dtype(t, dtype, op, what);
}

// b shaped and typed as a.
inline void check_same(const Tensor& a, const Tensor& b, const char* op, const char* what) {
  check(b, a.shape(), a.dtype(), op, what);
}

}  // namespace dlbench::backend
