#include "engine/data/blobs.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"

namespace dlbench::data {
namespace {

// An ellipse (rz 0: every depth) or an ellipsoid.
struct Ellipsoid {
  double cz, cy, cx, rz, ry, rx;
  bool contains(double z, double y, double x) const {
    const double dz = rz > 0 ? (z - cz) / rz : 0.0, dy = (y - cy) / ry, dx = (x - cx) / rx;
    return dz * dz + dy * dy + dx * dx <= 1.0;
  }
};

// A uniform draw in [low, high).
double between(std::uint64_t& state, double low, double high) {
  return low + (high - low) * splitmix64_unit(state);
}

// The cells [lo, hi] of one axis of size `size` that an extent [c - r, c + r] may touch.
std::pair<std::int64_t, std::int64_t> span_of(double c, double r, std::int64_t size) {
  return {std::max<std::int64_t>(0, static_cast<std::int64_t>(c - r)),
          std::min<std::int64_t>(size - 1, static_cast<std::int64_t>(c + r) + 1)};
}

// One sample's class map [d, h, w] (d = 1 for an image).
struct Map {
  std::int32_t* cells;
  std::int64_t d, h, w;
};

// Paints class `c` in `e` over one sample's map (only where the class below it lies, so a
// lesion stays inside its organ), then, with even odds, a smaller ellipsoid of class c + 1
// inside.
void paint(const Map& m, const Ellipsoid& e, std::int32_t c, std::int64_t classes,
           std::uint64_t& state) {
  const auto [z0, z1] =
      e.rz > 0 ? span_of(e.cz, e.rz, m.d) : std::pair<std::int64_t, std::int64_t>{0, 0};
  const auto [y0, y1] = span_of(e.cy, e.ry, m.h);
  const auto [x0, x1] = span_of(e.cx, e.rx, m.w);
  for (std::int64_t z = z0; z <= z1; ++z)
    for (std::int64_t y = y0; y <= y1; ++y)
      for (std::int64_t x = x0; x <= x1; ++x) {
        std::int32_t& cell = m.cells[(z * m.h + y) * m.w + x];
        if (e.contains(static_cast<double>(z), static_cast<double>(y), static_cast<double>(x)) &&
            cell == c - 1)
          cell = c;
      }
  if (c + 1 >= classes || splitmix64_unit(state) < 0.5) return;
  const double shrink = between(state, 0.25, 0.5);
  Ellipsoid inner{e.cz,
                  e.cy + between(state, -0.4, 0.4) * e.ry,
                  e.cx + between(state, -0.4, 0.4) * e.rx,
                  0.0,
                  std::max(1.0, e.ry * shrink),
                  std::max(1.0, e.rx * shrink)};
  if (e.rz > 0) {  // drawn after the 2D draws, so images keep the scenes they always had
    inner.cz = e.cz + between(state, -0.4, 0.4) * e.rz;
    inner.rz = std::max(1.0, e.rz * shrink);
  }
  paint(m, inner, c + 1, classes, state);
}

}  // namespace

std::vector<std::int32_t> blob_volume_labels(std::int64_t n, std::int64_t d, std::int64_t h,
                                             std::int64_t w, std::int64_t classes,
                                             std::uint64_t seed, bool volumetric) {
  DLBENCH_CHECK(n > 0 && d > 0 && h > 0 && w > 0 && classes >= 2,
                "blob_labels: sizes must be positive and classes at least 2");
  std::vector<std::int32_t> labels(static_cast<std::size_t>(n * d * h * w), 0);
  std::uint64_t state = seed;
  for (std::int64_t s = 0; s < n; ++s) {
    const Map map{labels.data() + s * d * h * w, d, h, w};
    const int organs = 1 + static_cast<int>(splitmix64_unit(state) * 3.0);
    for (int k = 0; k < organs; ++k) {
      Ellipsoid e{0.0,
                  between(state, 0.2, 0.8) * static_cast<double>(h),
                  between(state, 0.2, 0.8) * static_cast<double>(w),
                  0.0,
                  std::max(1.0, between(state, 0.08, 0.2) * static_cast<double>(h)),
                  std::max(1.0, between(state, 0.08, 0.2) * static_cast<double>(w))};
      if (volumetric) {
        e.cz = between(state, 0.2, 0.8) * static_cast<double>(d);
        e.rz = std::max(1.0, between(state, 0.08, 0.2) * static_cast<double>(d));
      }
      paint(map, e, 1, classes, state);
    }
  }
  return labels;
}

std::vector<std::int32_t> blob_labels(std::int64_t n, std::int64_t h, std::int64_t w,
                                      std::int64_t classes, std::uint64_t seed) {
  return blob_volume_labels(n, 1, h, w, classes, seed, false);
}

std::vector<float> blob_images(const std::vector<std::int32_t>& labels, std::int64_t channels,
                               std::int64_t classes, std::uint64_t noise_seed) {
  std::vector<float> image(labels.size() * static_cast<std::size_t>(channels));
  std::uint64_t state = noise_seed;
  const double middle = static_cast<double>(classes - 1) / 2.0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::int64_t c = 0; c < channels; ++c) {
      const double noise = splitmix64_normal(state);
      image[i * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)] =
          static_cast<float>(labels[i] - middle + 0.5 * noise);
    }
  return image;
}

}  // namespace dlbench::data
