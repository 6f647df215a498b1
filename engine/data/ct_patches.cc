#include "engine/data/ct_patches.h"

#include <algorithm>
#include <utility>

#include "engine/core/splitmix64.h"
#include "engine/data/ct_dataset.h"
#include "engine/data/ct_source.h"

namespace dlbench::data {
namespace {

// Foreground voxels kept per case to centre patches on: every k-th of them, k chosen so that at
// most this many remain (a KiTS19 case has some 10^5 to 10^6).
constexpr std::int64_t kForegroundSamples = 4096;

Box case_extent(const CtCase& c) {
  return {c.slices, c.side, c.side};
}

// Where a patch of `extent` may start along an axis of length `size`: anywhere it fits, or, on
// an axis shorter than the patch, centred with the padding split.
std::pair<std::int64_t, std::int64_t> start_range(std::int64_t size, std::int64_t extent) {
  if (size >= extent) return {0, size - extent};
  const std::int64_t centred = -((extent - size) / 2);
  return {centred, centred};
}

// Flat indices of every k-th voxel of kidney or tumour, at most kForegroundSamples.
std::vector<std::int64_t> foreground_voxels(const CtCase& c) {
  const auto total = static_cast<std::int64_t>(
      std::count_if(c.labels.begin(), c.labels.end(), [](std::uint8_t l) { return l > 0; }));
  const std::int64_t every =
      std::max<std::int64_t>(1, (total + kForegroundSamples - 1) / kForegroundSamples);
  std::vector<std::int64_t> out;
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < c.labels.size(); ++i)
    if (c.labels[i] > 0 && seen++ % every == 0) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

// Training cases' indices, once a pass.
std::vector<std::size_t> training_cases(const CtData& data) {
  std::vector<std::size_t> out(data.train_cases().size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

class CtPatchSource final : public CtSource<std::size_t> {
 public:
  CtPatchSource(std::shared_ptr<const CtData> data, std::size_t images, std::size_t labels,
                std::uint64_t seed)
      : CtSource(data, images, labels, seed, training_cases(*data)) {
    for (const CtCase& c : data_->train_cases()) foreground_.push_back(foreground_voxels(c));
  }
  std::string name() const override { return "ct patches"; }

 private:
  void write(const std::size_t& c, const Tensor& images, float* image,
             std::int32_t* labels) override {
    const Box extent = {images.dim(1), images.dim(2), images.dim(3)};
    const CtCase& ct = data_->train_cases()[c];
    ct_patch_to_host(ct, origin(ct, foreground_[c], extent), extent, images.dim(4), image, labels);
  }

  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {  // in [lo, hi]
    return lo + static_cast<std::int64_t>(splitmix64_next(state_) %
                                          static_cast<std::uint64_t>(hi - lo + 1));
  }

  Box origin(const CtCase& c, const std::vector<std::int64_t>& foreground, const Box& extent) {
    const Box size = case_extent(c);
    const bool centred = !foreground.empty() && splitmix64_unit(state_) < kForegroundShare;
    Box centre{};
    if (centred) {
      const std::int64_t at = foreground[static_cast<std::size_t>(
          uniform(0, static_cast<std::int64_t>(foreground.size()) - 1))];
      centre = {at / (c.side * c.side), at / c.side % c.side, at % c.side};
    }
    Box out{};
    for (int axis = 0; axis < 3; ++axis) {
      const auto [lo, hi] = start_range(size[axis], extent[axis]);
      out[axis] = centred ? std::clamp(centre[axis] - extent[axis] / 2, lo, hi) : uniform(lo, hi);
    }
    return out;
  }

  std::vector<std::vector<std::int64_t>> foreground_;  // per training case
};

}  // namespace

void ct_patch_to_host(const CtCase& c, const Box& origin, const Box& extent, std::int64_t channels,
                      float* images, std::int32_t* labels) {
  const Box size = case_extent(c);
  const float air = normalized_hu(static_cast<std::int16_t>(kHuLow));
  std::int64_t out = 0;
  for (std::int64_t z = origin[0]; z < origin[0] + extent[0]; ++z)
    for (std::int64_t y = origin[1]; y < origin[1] + extent[1]; ++y)
      for (std::int64_t x = origin[2]; x < origin[2] + extent[2]; ++x, ++out) {
        const bool inside = z >= 0 && z < size[0] && y >= 0 && y < size[1] && x >= 0 && x < size[2];
        const auto at = static_cast<std::size_t>((z * size[1] + y) * size[2] + x);
        const float v = inside ? normalized_hu(c.hu[at]) : air;
        for (std::int64_t k = 0; k < channels; ++k) images[out * channels + k] = v;
        labels[out] = inside ? c.labels[at] : 0;
      }
}

std::vector<Box> tile_case(const CtCase& c, const Box& extent, std::vector<Box>* owned) {
  const Box size = case_extent(c);
  std::array<std::vector<std::pair<std::int64_t, std::int64_t>>, 3> axes;  // (origin, owned)
  for (int axis = 0; axis < 3; ++axis)
    for (std::int64_t start = 0; start < size[axis]; start += extent[axis]) {
      const auto [lo, hi] = start_range(size[axis], extent[axis]);
      axes[axis].emplace_back(std::clamp(start, lo, hi), start);
    }
  std::vector<Box> origins;
  owned->clear();
  for (const auto& [z, own_z] : axes[0])
    for (const auto& [y, own_y] : axes[1])
      for (const auto& [x, own_x] : axes[2]) {
        origins.push_back({z, y, x});
        owned->push_back({own_z, own_y, own_x});
      }
  return origins;
}

std::unique_ptr<DataSource> make_ct_patch_source(std::shared_ptr<const CtData> data,
                                                 std::size_t images, std::size_t labels,
                                                 std::uint64_t seed) {
  return std::make_unique<CtPatchSource>(std::move(data), images, labels, seed);
}

}  // namespace dlbench::data
