// CT cases as U-Net trains on them: each case a stack of square slices, each pixel a
// Hounsfield value clipped to the window the KiTS19 reference trains in and a class
// (background 0, kidney 1, tumour 2), kept compact (2 + 1 bytes a pixel) so many cases fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::data {

// KiTS19's intensity window and its statistics inside it, as MLPerf's reference 3D U-Net
// normalizes: clip to [-79, 304] HU, then (hu - 101.0) / 76.9.
constexpr float kHuLow = -79.0f, kHuHigh = 304.0f, kHuMean = 101.0f, kHuStd = 76.9f;

inline float normalized_hu(std::int16_t hu) {
  return (static_cast<float>(hu) - kHuMean) / kHuStd;
}

struct CtCase {
  std::string name;  // the case's folder ("case_00042")
  std::int64_t slices = 0, side = 0;
  std::vector<std::int16_t> hu;      // [slices, side, side], clipped to [kHuLow, kHuHigh]
  std::vector<std::uint8_t> labels;  // [slices, side, side]
  std::uint8_t max_label = 0;
};

// One case from its image and segmentation volumes (engine/data/nifti_volume.h), cut into
// slices across the axis whose other two extents are equal (KiTS19 stores [slices, 512, 512]; a
// cube is cut across its last axis, NIfTI's usual axial one). Throws Error(kUsage) naming the
// files when the two volumes differ in shape, no slice is square, or a label is not an integer
// in [0, 255].
CtCase read_ct_case(const std::string& name, const std::string& image_path,
                    const std::string& labels_path);

}  // namespace dlbench::data
