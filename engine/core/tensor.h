// Tensor: a non-owning view of memory that an arena or a parameter store owns. Tensors are
// dense and row-major over their shape (the last dimension is contiguous); image activations
// are NHWC, convolution weights KRSC ("ohwi"), matmul weights [out, in].
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/checked.h"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/core/shape.h"

namespace dlbench {

class Tensor {
 public:
  Tensor() = default;
  Tensor(void* data, Shape shape, DType dtype, Device device)
      : data_(data), shape_(shape), dtype_(dtype), device_(device) {}

  void* data() const { return data_; }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(int i) const { return shape_[i]; }
  int rank() const { return shape_.rank(); }
  DType dtype() const { return dtype_; }
  const Device& device() const { return device_; }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t bytes() const { return checked_bytes(shape_, dtype_); }
  bool defined() const { return data_ != nullptr; }

  // The same memory seen with another shape of the same element count.
  Tensor reshaped(Shape shape) const;

 private:
  void* data_ = nullptr;
  Shape shape_;
  DType dtype_ = DType::kF32;
  Device device_;
};

// Precondition checks at the door of every op: name the op and what was wrong.
void check_shape(const Tensor& t, const Shape& expected, const char* op, const char* what);
void check_dtype(const Tensor& t, DType expected, const char* op, const char* what);

}  // namespace dlbench
