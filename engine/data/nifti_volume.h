// One 3D NIfTI volume (NIfTI-1 or NIfTI-2, `.nii` or `.nii.gz`: the format of KiTS and the
// Medical Segmentation Decathlon), read through Debian's libnifti2 rather than by hand.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::data {

struct Volume {
  std::string path;
  // Extents along NIfTI's i, j, k axes; voxel (i, j, k) is values[i + nx (j + ny k)] (i fastest,
  // the file's own order).
  std::array<std::int64_t, 3> dims{};
  std::vector<float> values;  // the stored numbers times scl_slope plus scl_inter where set
};

// Reads a volume of real or integer voxels with at most three axes longer than 1. A file that
// cannot be read, is not NIfTI, is cut short, holds complex or colour voxels or a fourth axis
// throws Error(kUsage) naming the file.
Volume read_nifti(const std::string& path);

}  // namespace dlbench::data
