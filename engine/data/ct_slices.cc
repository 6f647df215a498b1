#include "engine/data/ct_slices.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/data/nifti_volume.h"

namespace dlbench::data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::kUsage, "cannot use " + path + ": " + why);
}

std::string dims_text(const std::array<std::int64_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// The axis slices are cut across: the one whose other two extents are equal, the last of them
// for a cube; -1 when none is.
int slice_axis(const std::array<std::int64_t, 3>& d) {
  for (int axis = 2; axis >= 0; --axis)
    if (d[(axis + 1) % 3] == d[(axis + 2) % 3]) return axis;
  return -1;
}

}  // namespace

CtCase read_ct_case(const std::string& name, const std::string& image_path,
                    const std::string& labels_path) {
  const Volume image = read_nifti(image_path);
  const Volume labels = read_nifti(labels_path);
  if (image.dims != labels.dims)
    fail(labels_path, "its segmentation is " + dims_text(labels.dims) + " voxels, the image " +
                          dims_text(image.dims));
  const int axis = slice_axis(image.dims);
  if (axis < 0) fail(image_path, dims_text(image.dims) + " voxels has no square slices");
  // In-plane axes a (rows) and b (columns), b the faster of the two in the file.
  const int b = axis == 0 ? 1 : 0, a = axis == 2 ? 1 : 2;
  const std::array<std::int64_t, 3> d = image.dims;
  const std::array<std::int64_t, 3> stride = {1, d[0], d[0] * d[1]};
  CtCase c;
  c.name = name;
  c.slices = d[axis];
  c.side = d[a];
  const auto pixels = static_cast<std::size_t>(c.slices * c.side * c.side);
  c.hu.resize(pixels);
  c.labels.resize(pixels);
  std::size_t out = 0;
  for (std::int64_t s = 0; s < c.slices; ++s)
    for (std::int64_t r = 0; r < c.side; ++r)
      for (std::int64_t col = 0; col < c.side; ++col, ++out) {
        const auto at =
            static_cast<std::size_t>(s * stride[axis] + r * stride[a] + col * stride[b]);
        const float hu = image.values[at], label = labels.values[at];
        if (!std::isfinite(hu)) fail(image_path, "a voxel is not a number");
        if (!(label >= 0.0f && label <= 255.0f && label == std::floor(label)))
          fail(labels_path,
               "a voxel's label is " + std::to_string(label) + "; labels are classes 0, 1, 2, ...");
        c.hu[out] = static_cast<std::int16_t>(std::lround(std::clamp(hu, kHuLow, kHuHigh)));
        c.labels[out] = static_cast<std::uint8_t>(label);
        c.max_label = std::max(c.max_label, c.labels[out]);
      }
  return c;
}

}  // namespace dlbench::data
