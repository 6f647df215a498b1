// Cutting a batch into slices whose tensors stay under a byte limit: the sizes of the slices,
// in order. Slices are of equal size within one sample (n = 1344 at a limit of 1,300 samples
// gives 672 + 672, not 1,300 + 44), so a library plans at most two shapes and none is tiny.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlbench::backend {

// sample_bytes: the largest per-sample tensor of the call; a sample over the limit is a slice
// of its own (nothing smaller exists).
inline std::vector<std::int64_t> batch_slices(std::int64_t n, std::size_t sample_bytes,
                                              std::size_t limit_bytes) {
  if (n <= 0) return {};
  const auto most = static_cast<std::int64_t>(
      std::max<std::size_t>(1, limit_bytes / std::max<std::size_t>(sample_bytes, 1)));
  const std::int64_t count = (n + most - 1) / most;
  std::vector<std::int64_t> sizes;
  for (std::int64_t i = 0; i < count; ++i) sizes.push_back(n / count + (i < n % count ? 1 : 0));
  return sizes;
}

}  // namespace dlbench::backend
