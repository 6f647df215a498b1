#include "engine/nn/gradient_buckets.h"

#include <algorithm>

namespace dlbench::nn {

std::vector<GradientBucket> plan_gradient_buckets(std::vector<GradientSlot> slots,
                                                  std::size_t bucket_bytes) {
  // Walk every group from its highest offset down, closing a bucket at bucket_bytes.
  std::sort(slots.begin(), slots.end(), [](const GradientSlot& a, const GradientSlot& b) {
    return a.group != b.group ? a.group < b.group : a.offset > b.offset;
  });
  std::vector<GradientBucket> buckets;
  bool open = false;
  for (const GradientSlot& s : slots) {
    if (s.count == 0) continue;
    const std::int64_t limit = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(bucket_bytes / std::max<std::size_t>(s.element_bytes, 1)));
    if (open) {
      GradientBucket& b = buckets.back();
      const bool fits = b.end - s.offset <= limit;
      if (b.group == s.group && b.begin == s.offset + s.count && fits) {
        b.begin = s.offset;
        b.ready_after = std::min(b.ready_after, s.node);
        continue;
      }
    }
    buckets.push_back({s.group, s.offset, s.offset + s.count, s.node});
    open = true;
  }
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const GradientBucket& a, const GradientBucket& b) {
                     return a.ready_after > b.ready_after;
                   });
  return buckets;
}

}  // namespace dlbench::nn
