// Shape: up to kMaxRank extents. Image activations are NHWC: {N, H, W, C}.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace dlbench {

class Shape {
 public:
  static constexpr int kMaxRank = 6;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);

  int rank() const { return rank_; }
  std::int64_t operator[](int i) const { return dims_[i]; }
  std::int64_t& operator[](int i) { return dims_[i]; }
  std::int64_t numel() const;
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[32, 224, 224, 3]"

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

}  // namespace dlbench
