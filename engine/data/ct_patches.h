// Cubes cut from CT cases, as 3D U-Net trains and is scored on them (`dlbench run unet3d --data
// DIR`): a case is the volume [slices, side, side] that ct_slices.h reads, and a patch is any box
// of it, voxels past the case's edges filled with air (the lowest Hounsfield value of the
// window, normalized) and background.
//
// Training patches follow MLPerf's reference: each comes from the next case of a shuffled pass
// over the training cases, at a uniformly random place, or (with probability kForegroundShare)
// centred on a random voxel of kidney or tumour, so that small lesions are seen often enough.
// MLPerf also resamples every case to 1.6 x 1.2 x 1.2 mm voxels first; dlbench takes the voxels
// as stored (KiTS19's slice thickness varies from case to case), and says so in docs/data.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/data/ct_slices.h"
#include "engine/data/data_source.h"

namespace dlbench::data {

class CtData;

// Extents or positions along the case's axes: slices, rows, columns.
using Box = std::array<std::int64_t, 3>;

constexpr double kForegroundShare = 0.4;  // MLPerf's oversampling

// Writes the patch of `c` whose first voxel is `origin` (any coordinates, even negative) and whose
// extent is `extent` into images [extent..., channels] (normalized_hu; the same value in every
// channel) and labels [extent...].
void ct_patch_to_host(const CtCase& c, const Box& origin, const Box& extent, std::int64_t channels,
                      float* images, std::int32_t* labels);

// The origins of patches of `extent` that tile the case: along each axis, starts 0, e, 2e, ...
// below the case's extent, the last moved back to end at the case's edge where the case is at
// least e long (so it overlaps its neighbour rather than running past the edge). `owned` gets,
// per tile, the first voxel it alone counts along each axis (its nominal start), so that a
// voxel in two tiles is counted once.
std::vector<Box> tile_case(const CtCase& c, const Box& extent, std::vector<Box>* owned);

// Fills rank-5 "images" [n, d, h, w, channels] and rank-4 i32 "labels" [n, d, h, w] (inputs
// `images` and `labels` of the graph) with training patches of `data`'s training cases.
std::unique_ptr<DataSource> make_ct_patch_source(std::shared_ptr<const CtData> data,
                                                 std::size_t images, std::size_t labels,
                                                 std::uint64_t seed);

}  // namespace dlbench::data
