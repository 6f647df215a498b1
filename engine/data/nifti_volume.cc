#include "engine/data/nifti_volume.h"

#include <nifti2_io.h>

#include <memory>
#include <mutex>

#include "engine/core/error.h"

namespace dlbench::data {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::kUsage, "cannot read the NIfTI volume " + path + ": " + why);
}

struct FreeImage {
  void operator()(nifti_image* image) const { nifti_image_free(image); }
};

template <class T>
void scale_into(const void* data, std::int64_t n, double slope, double inter, float* out) {
  const auto* in = static_cast<const T*>(data);
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(static_cast<double>(in[i]) * slope + inter);
}

}  // namespace

Volume read_nifti(const std::string& path) {
  // The library prints its own complaints to stderr unless told not to; ours are one line.
  static std::once_flag quiet;
  std::call_once(quiet, [] { nifti_set_debug_level(0); });
  const std::unique_ptr<nifti_image, FreeImage> image(nifti_image_read(path.c_str(), 1));
  if (!image) fail(path, "not a NIfTI-1/2 file, or cut short");
  if (image->data == nullptr) fail(path, "its voxels could not be read");
  Volume v;
  v.path = path;
  v.dims = {image->nx, image->ny, image->nz};
  for (int axis = 4; axis <= 7; ++axis)
    if (image->dim[0] >= axis && image->dim[axis] > 1)
      fail(path, "it has " + std::to_string(image->dim[0]) + " axes; a volume has three");
  const std::int64_t n = image->nx * image->ny * image->nz;
  if (n <= 0 || n != image->nvox) fail(path, "its dimensions and voxel count disagree");
  // NIfTI: a slope of 0 means the values are stored unscaled.
  const double slope = image->scl_slope == 0.0 ? 1.0 : image->scl_slope;
  const double inter = image->scl_slope == 0.0 ? 0.0 : image->scl_inter;
  v.values.resize(static_cast<std::size_t>(n));
  float* out = v.values.data();
  switch (image->datatype) {
    case DT_UINT8:
      scale_into<std::uint8_t>(image->data, n, slope, inter, out);
      break;
    case DT_INT8:
      scale_into<std::int8_t>(image->data, n, slope, inter, out);
      break;
    case DT_INT16:
      scale_into<std::int16_t>(image->data, n, slope, inter, out);
      break;
    case DT_UINT16:
      scale_into<std::uint16_t>(image->data, n, slope, inter, out);
      break;
    case DT_INT32:
      scale_into<std::int32_t>(image->data, n, slope, inter, out);
      break;
    case DT_UINT32:
      scale_into<std::uint32_t>(image->data, n, slope, inter, out);
      break;
    case DT_FLOAT32:
      scale_into<float>(image->data, n, slope, inter, out);
      break;
    case DT_FLOAT64:
      scale_into<double>(image->data, n, slope, inter, out);
      break;
    default:
      fail(path, std::string("its voxels are ") + nifti_datatype_string(image->datatype) +
                     "; integers or reals are read");
  }
  return v;
}

}  // namespace dlbench::data
