// The patches behind `dlbench run unet3d --data`: voxels past a case's edge are air and
// background, a case's tiling counts every voxel once, and the source serves patches whose
// images and labels agree, a fair share of them centred on the foreground.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/ct_dataset.h"
#include "engine/data/ct_patches.h"

namespace dlbench::data {
namespace {

// A case of `size` voxels, background at -79 HU, kidney (1, 200 HU) in the box [lo, hi) and
// everything else background.
CtCase ct_case(const Box& size, const Box& lo, const Box& hi) {
  CtCase c;
  c.name = "case_00000";
  c.slices = size[0];
  c.side = size[1];
  EXPECT_EQ(size[1], size[2]);
  const auto voxels = static_cast<std::size_t>(size[0] * size[1] * size[2]);
  c.hu.assign(voxels, static_cast<std::int16_t>(kHuLow));
  c.labels.assign(voxels, 0);
  for (std::int64_t z = lo[0]; z < hi[0]; ++z)
    for (std::int64_t y = lo[1]; y < hi[1]; ++y)
      for (std::int64_t x = lo[2]; x < hi[2]; ++x) {
        const auto at = static_cast<std::size_t>((z * size[1] + y) * size[2] + x);
        c.hu[at] = 200, c.labels[at] = 1, c.max_label = 1;
      }
  return c;
}

float normalized(float hu) {
  return (hu - kHuMean) / kHuStd;
}

TEST(CtPatchesTest, VoxelsPastTheEdgeAreAirAndBackground) {
  const CtCase c = ct_case({2, 3, 3}, {0, 0, 0}, {2, 3, 3});  // all kidney
  const Box origin = {-1, 1, -1}, extent = {3, 3, 3};
  std::vector<float> images(27 * 2);
  std::vector<std::int32_t> labels(27);
  ct_patch_to_host(c, origin, extent, 2, images.data(), labels.data());
  int i = 0;
  for (std::int64_t z = -1; z < 2; ++z)
    for (std::int64_t y = 1; y < 4; ++y)
      for (std::int64_t x = -1; x < 2; ++x, ++i) {
        const bool inside = z >= 0 && y < 3 && x >= 0;
        EXPECT_EQ(labels[i], inside ? 1 : 0) << z << " " << y << " " << x;
        for (int k = 0; k < 2; ++k)
          EXPECT_FLOAT_EQ(images[i * 2 + k], normalized(inside ? 200.0f : kHuLow));
      }
}

// Cases longer, as long as and shorter than the patch along each axis.
TEST(CtPatchesTest, ATilingCountsEveryVoxelOnce) {
  for (const Box& size : {Box{5, 7, 7}, Box{4, 8, 8}, Box{2, 3, 3}, Box{9, 10, 10}}) {
    const CtCase c = ct_case(size, {0, 0, 0}, {0, 0, 0});
    const Box extent = {4, 4, 3};
    std::vector<Box> owned;
    const std::vector<Box> tiles = tile_case(c, extent, &owned);
    ASSERT_EQ(tiles.size(), owned.size());
    std::vector<int> counted(static_cast<std::size_t>(size[0] * size[1] * size[2]), 0);
    for (std::size_t t = 0; t < tiles.size(); ++t) {
      for (int axis = 0; axis < 3; ++axis) {
        if (size[axis] >= extent[axis]) {  // inside the case
          EXPECT_GE(tiles[t][axis], 0);
          EXPECT_LE(tiles[t][axis] + extent[axis], size[axis]);
        }
        EXPECT_LE(tiles[t][axis], owned[t][axis]);  // the owned part lies in the tile
      }
      for (std::int64_t z = owned[t][0]; z < std::min(owned[t][0] + extent[0], size[0]); ++z)
        for (std::int64_t y = owned[t][1]; y < std::min(owned[t][1] + extent[1], size[1]); ++y)
          for (std::int64_t x = owned[t][2]; x < std::min(owned[t][2] + extent[2], size[2]); ++x) {
            EXPECT_LT(z, tiles[t][0] + extent[0]);
            EXPECT_LT(y, tiles[t][1] + extent[1]);
            EXPECT_LT(x, tiles[t][2] + extent[2]);
            ++counted[static_cast<std::size_t>((z * size[1] + y) * size[2] + x)];
          }
    }
    for (int n : counted) EXPECT_EQ(n, 1) << size[0] << "x" << size[1] << "x" << size[2];
  }
}

// A small kidney in a corner that random places rarely reach (about 3 % of patches): some
// 40 % of patches hold it, as centring on the foreground two times in five makes them.
TEST(CtPatchesTest, TheSourceServesPatchesCentredOnTheForegroundTwiceInFive) {
  std::vector<CtCase> train{ct_case({8, 24, 24}, {3, 20, 20}, {5, 22, 22})};
  const auto data = std::make_shared<CtData>("kits", std::move(train), std::vector<CtCase>{}, 0);
  auto be = backend::make_backend(Device::cpu());
  constexpr std::int64_t kPatches = 200, kVoxels = 4 * 4 * 4;
  const std::vector<InputSpec> specs{
      {"images", {kPatches, 4, 4, 4, 1}, DType::kF32, scene_images(2), "volumes (NDHWC)"},
      {"labels", {kPatches, 4, 4, 4}, DType::kI32, scene_labels(2), "a class per voxel"}};
  std::vector<float> images(kPatches * kVoxels);
  std::vector<std::int32_t> labels(kPatches * kVoxels);
  const std::vector<Tensor> inputs{
      Tensor(images.data(), {kPatches, 4, 4, 4, 1}, DType::kF32, Device::cpu()),
      Tensor(labels.data(), {kPatches, 4, 4, 4}, DType::kI32, Device::cpu())};
  data->source(specs, 11)->fill(*be, inputs);
  int with_kidney = 0;
  for (std::int64_t p = 0; p < kPatches; ++p) {
    bool kidney = false;
    for (std::int64_t v = p * kVoxels; v < (p + 1) * kVoxels; ++v) {
      const auto i = static_cast<std::size_t>(v);
      EXPECT_FLOAT_EQ(images[i], normalized(labels[i] == 1 ? 200.0f : kHuLow)) << v;
      kidney = kidney || labels[i] == 1;
    }
    with_kidney += kidney;
  }
  EXPECT_GE(with_kidney, 0.3 * kPatches);
  EXPECT_LE(with_kidney, 0.55 * kPatches);
}

}  // namespace
}  // namespace dlbench::data
