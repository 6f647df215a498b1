#include "engine/core/tensor.h"

#include <string>

namespace dlbench {

Tensor Tensor::reshaped(Shape shape) const {
  DLBENCH_CHECK(shape.numel() == numel(), "reshape " + shape_.str() + " -> " + shape.str());
  return Tensor(data_, shape, dtype_, device_);
}

void check_shape(const Tensor& t, const Shape& expected, const char* op, const char* what) {
  if (!(t.shape() == expected))
    fail_check(
        "shape matches", op, 0,
        std::string(what) + " has shape " + t.shape().str() + ", expected " + expected.str());
}

void check_dtype(const Tensor& t, DType expected, const char* op, const char* what) {
  if (t.dtype() != expected)
    fail_check(
        "dtype matches", op, 0,
        std::string(what) + " is " + to_string(t.dtype()) + ", expected " + to_string(expected));
}

}  // namespace dlbench
