#include "tests/ops/host_tensor.h"

#include <limits>

namespace dlbench::ops_test {

HostTensor random_tensor(Shape shape, std::uint64_t seed) {
  HostTensor t(shape);
  t.data = op_harness::random_values(shape.numel(), seed);
  return t;
}

HostTensor random_positive(Shape shape, std::uint64_t seed, float lo, float hi) {
  HostTensor t(shape);
  t.data = op_harness::positive_values(shape.numel(), seed, lo, hi);
  return t;
}

HostTensor poisoned(Shape shape) {
  HostTensor t(shape);
  for (float& v : t.data) v = std::numeric_limits<float>::quiet_NaN();
  return t;
}

}  // namespace dlbench::ops_test
