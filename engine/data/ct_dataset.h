// CT cases as U-Net's data (`dlbench run unet --data DIR`, and unet3d's), in KiTS19's layout: DIR
// holds a folder per case, each with imaging.nii.gz and segmentation.nii.gz (or .nii), or DIR is
// one such folder. Cases without a segmentation (KiTS19's test cases) are skipped. With two cases
// or more, the last fifth of them in name order (at least one) is held out for scoring; each step's
// slices are the next of a shuffled pass over the other cases' slices (patches: ct_patches.h).
//
// Every case is read into memory at the start (3 bytes a pixel: KiTS19's 210 labelled cases,
// 45,424 slices, take about 36 GB); point DIR at fewer cases on a smaller machine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataset.h"

namespace dlbench::data {

class CtData final : public Dataset, public std::enable_shared_from_this<CtData> {
 public:
  CtData(std::string path, std::vector<CtCase> train, std::vector<CtCase> held_out,
         std::int64_t unlabelled);
  const std::vector<CtCase>& train_cases() const { return train_; }
  std::string describe() const override;
  // Fills the graph's "images" [n, side, side, channels] (any float dtype; the same slice in
  // every channel) and i32 "labels" [n, side, side] with slices; or, for a 3D model, "images"
  // [n, d, h, w, channels] and "labels" [n, d, h, w] with patches of any size (ct_patches.h). A
  // 2D model whose input side differs from the slices', or a model whose classes the labels
  // exceed, is a usage error.
  std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                     std::uint64_t seed) const override;
  std::span<const CtCase> held_out_cases() const override { return held_out_; }

 private:
  std::string path_;
  std::vector<CtCase> train_, held_out_;
  std::int64_t unlabelled_;
};

// What `--data` takes for the U-Nets, as `dlbench run --help` lists it.
inline constexpr const char* kCtDataFormat =
    "KiTS19-style CT cases (a folder of case_*/imaging.nii.gz and segmentation.nii.gz)";

// Throws Error(kUsage) naming the path when it is no folder, holds no labelled case, or its
// cases' slices differ in size (and as read_ct_case does for a bad volume).
std::shared_ptr<const Dataset> read_ct_data(const std::string& path);

// Writes slices of `c` into host buffers: images [n, side, side, channels] normalized
// (normalized_hu), labels [n, side, side]; slice k is c's slice first + k.
void ct_slices_to_host(const CtCase& c, std::int64_t first, std::int64_t n, std::int64_t channels,
                       float* images, std::int32_t* labels);

}  // namespace dlbench::data
