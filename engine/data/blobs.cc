#include "engine/data/blobs.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"

namespace dlbench::data {
namespace {

struct Ellipse {
  double cy, cx, ry, rx;
  bool contains(double y, double x) const {
    const double dy = (y - cy) / ry, dx = (x - cx) / rx;
    return dy * dy + dx * dx <= 1.0;
  }
};

// A uniform draw in [low, high).
double between(std::uint64_t& state, double low, double high) {
  return low + (high - low) * splitmix64_unit(state);
}

// Paints class `c` in `e` over one sample's map (only where the class below it lies, so a
// lesion stays inside its organ), then, with even odds, a smaller ellipse of class c + 1 inside.
void paint(std::int32_t* map, std::int64_t h, std::int64_t w, const Ellipse& e, std::int32_t c,
           std::int64_t classes, std::uint64_t& state) {
  const auto y0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(e.cy - e.ry));
  const auto y1 = std::min<std::int64_t>(h - 1, static_cast<std::int64_t>(e.cy + e.ry) + 1);
  const auto x0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(e.cx - e.rx));
  const auto x1 = std::min<std::int64_t>(w - 1, static_cast<std::int64_t>(e.cx + e.rx) + 1);
  for (std::int64_t y = y0; y <= y1; ++y)
    for (std::int64_t x = x0; x <= x1; ++x)
      if (e.contains(static_cast<double>(y), static_cast<double>(x)) && map[y * w + x] == c - 1)
        map[y * w + x] = c;
  if (c + 1 >= classes || splitmix64_unit(state) < 0.5) return;
  const double shrink = between(state, 0.25, 0.5);
  const Ellipse inner{e.cy + between(state, -0.4, 0.4) * e.ry,
                      e.cx + between(state, -0.4, 0.4) * e.rx, std::max(1.0, e.ry * shrink),
                      std::max(1.0, e.rx * shrink)};
  paint(map, h, w, inner, c + 1, classes, state);
}

}  // namespace

std::vector<std::int32_t> blob_labels(std::int64_t n, std::int64_t h, std::int64_t w,
                                      std::int64_t classes, std::uint64_t seed) {
  DLBENCH_CHECK(n > 0 && h > 0 && w > 0 && classes >= 2,
                "blob_labels: sizes must be positive and classes at least 2");
  std::vector<std::int32_t> labels(static_cast<std::size_t>(n * h * w), 0);
  std::uint64_t state = seed;
  for (std::int64_t s = 0; s < n; ++s) {
    std::int32_t* map = labels.data() + s * h * w;
    const int organs = 1 + static_cast<int>(splitmix64_unit(state) * 3.0);
    for (int k = 0; k < organs; ++k) {
      const Ellipse e{between(state, 0.2, 0.8) * static_cast<double>(h),
                      between(state, 0.2, 0.8) * static_cast<double>(w),
                      std::max(1.0, between(state, 0.08, 0.2) * static_cast<double>(h)),
                      std::max(1.0, between(state, 0.08, 0.2) * static_cast<double>(w))};
      paint(map, h, w, e, 1, classes, state);
    }
  }
  return labels;
}

std::vector<float> blob_images(const std::vector<std::int32_t>& labels, std::int64_t channels,
                               std::int64_t classes, std::uint64_t noise_seed) {
  std::vector<float> image(labels.size() * static_cast<std::size_t>(channels));
  std::uint64_t state = noise_seed;
  const double middle = static_cast<double>(classes - 1) / 2.0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::int64_t c = 0; c < channels; ++c) {
      // Box-Muller from two uniform draws (the first kept away from 0 for the log).
      const double u1 = std::max(splitmix64_unit(state), 1e-12), u2 = splitmix64_unit(state);
      const double noise = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      image[i * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)] =
          static_cast<float>(labels[i] - middle + 0.5 * noise);
    }
  return image;
}

}  // namespace dlbench::data
