// Where batches come from. Real datasets (idx, CIFAR, image folders, MovieLens, text8)
// implement the same interface later.
#pragma once

#include <string>

#include "engine/core/tensor.h"

namespace dlbench::data {

struct Batch {
  Tensor images;  // NHWC in the network's compute dtype, on the device
  Tensor labels;  // [N] i32 on the device
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::string name() const = 0;
  // The next batch; the tensors stay valid until the next call.
  virtual Batch next() = 0;
};

}  // namespace dlbench::data
