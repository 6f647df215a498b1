// NIfTI volumes for the CT reader's tests, written with libnifti2 into the test's isolated home.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::testing {

// Writes `values` (voxel (i, j, k) at i + nx (j + ny k)) as `relative` (.nii or .nii.gz, under
// the isolated home; folders made as needed), stored as NIfTI datatype `datatype` (DT_INT16,
// DT_UINT8, DT_FLOAT32, ...) with scl_slope and scl_inter as given (slope 0: unscaled). Returns
// the path.
std::string write_nifti(const std::string& relative, std::array<std::int64_t, 3> dims,
                        const std::vector<float>& values, int datatype, double slope = 0.0,
                        double inter = 0.0);

// A KiTS19-style case folder `case_name` under `root` (relative to the isolated home): imaging
// [slices, side, side] of Hounsfield values and its segmentation, a disc of kidney (1) with a
// tumour (2) in its middle on every slice, the image -100 HU outside, 200 in the kidney, 50 in
// the tumour. Returns the folder.
std::string write_ct_case(const std::string& root, const std::string& case_name,
                          std::int64_t slices, std::int64_t side, bool with_segmentation = true);

}  // namespace dlbench::testing
