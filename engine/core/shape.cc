#include "engine/core/shape.h"

#include "engine/core/error.h"

namespace dlbench {

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  DLBENCH_CHECK(dims.size() <= kMaxRank, "shape rank above kMaxRank");
  for (std::int64_t d : dims) dims_[rank_++] = d;
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank_; ++i) {
    DLBENCH_CHECK(dims_[i] >= 0, "negative extent in shape " + str());
    if (__builtin_mul_overflow(n, dims_[i], &n))
      throw Error(ErrorKind::kUsage, "a tensor of shape " + str() + " does not fit in 64 bits",
                  "use a smaller batch or input size");
  }
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(dims_[i]);
  return s + "]";
}

}  // namespace dlbench
