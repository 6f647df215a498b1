#include "tests/support/nifti_file.h"

#include <nifti2_io.h>

#include <filesystem>
#include <stdexcept>

#include "tests/support/isolated_home.h"

namespace dlbench::testing {
namespace {

template <class T>
void store(const std::vector<float>& values, void* data) {
  for (std::size_t i = 0; i < values.size(); ++i)
    static_cast<T*>(data)[i] = static_cast<T>(values[i]);
}

}  // namespace

std::string write_nifti(const std::string& relative, std::array<std::int64_t, 3> dims,
                        const std::vector<float>& values, int datatype, double slope,
                        double inter) {
  const std::filesystem::path path = std::filesystem::path(isolated_home()) / relative;
  std::filesystem::create_directories(path.parent_path());
  const std::int64_t d[8] = {3, dims[0], dims[1], dims[2], 1, 1, 1, 1};
  nifti_image* image = nifti_make_new_nim(d, datatype, 1);
  if (image == nullptr) throw std::runtime_error("nifti_make_new_nim failed");
  if (datatype == DT_INT16)
    store<std::int16_t>(values, image->data);
  else if (datatype == DT_UINT8)
    store<std::uint8_t>(values, image->data);
  else if (datatype == DT_FLOAT32)
    store<float>(values, image->data);
  else
    throw std::runtime_error("write_nifti: datatype not covered");
  image->scl_slope = slope;
  image->scl_inter = inter;
  if (nifti_set_filenames(image, path.c_str(), 0, 1) != 0)
    throw std::runtime_error("nifti_set_filenames failed for " + path.string());
  nifti_image_write(image);
  nifti_image_free(image);
  return path.string();
}

std::string write_ct_case(const std::string& root, const std::string& case_name,
                          std::int64_t slices, std::int64_t side, bool with_segmentation) {
  const std::string folder = root + "/" + case_name;
  std::vector<float> hu(static_cast<std::size_t>(slices * side * side), -100.0f);
  std::vector<float> labels(hu.size(), 0.0f);
  const double middle = static_cast<double>(side - 1) / 2.0;
  for (std::int64_t k = 0; k < side; ++k)
    for (std::int64_t j = 0; j < side; ++j) {
      const double r2 = (static_cast<double>(j) - middle) * (static_cast<double>(j) - middle) +
                        (static_cast<double>(k) - middle) * (static_cast<double>(k) - middle);
      const double radius = static_cast<double>(side) / 3.0;
      const float label = r2 <= radius * radius / 9.0 ? 2.0f : r2 <= radius * radius ? 1.0f : 0.0f;
      for (std::int64_t s = 0; s < slices; ++s) {
        // KiTS19's order: the slice index is NIfTI's first (fastest) axis.
        const auto at = static_cast<std::size_t>(s + slices * (j + side * k));
        labels[at] = label;
        hu[at] = label == 2.0f ? 50.0f : label == 1.0f ? 200.0f : -100.0f;
      }
    }
  write_nifti(folder + "/imaging.nii.gz", {slices, side, side}, hu, DT_INT16);
  if (with_segmentation)
    write_nifti(folder + "/segmentation.nii.gz", {slices, side, side}, labels, DT_UINT8);
  return (std::filesystem::path(isolated_home()) / folder).string();
}

}  // namespace dlbench::testing
