// Segmentation quality of a trained U-Net on its data's held-out CT cases, as KiTS scores it:
// each held-out slice (2D), or each patch of a tiling of the case (3D: patches of the model's
// size, non-overlapping but for the last along an axis, which ends at the case's edge), is
// segmented (the class of highest score per pixel), and per case and per class from 1 on
// (kidney, tumour) dice = 2 |P and G| / (|P| + |G|) over the case's voxels, 1 where the class is
// neither present nor predicted; the means over the cases are reported. MLPerf scores its 3D
// U-Net with overlapping windows blended by a Gaussian; plain tiles score its seams a little
// worse.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bench/result/run_config.h"
#include "bench/result/run_result.h"
#include "engine/models/model_spec.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

// Per class, a case's pixel counts: predicted and true together, predicted, true.
struct ClassCounts {
  std::int64_t both = 0, predicted = 0, truth = 0;
};

// 2 both / (predicted + truth), or 1 when both counts are 0.
double dice_of(const ClassCounts& c);

// Adds one batch's predictions: scores [pixels, classes] f32, labels [pixels].
void count_classes(const float* scores, const std::int32_t* labels, std::int64_t pixels,
                   std::int64_t classes, std::vector<ClassCounts>& counts);

struct SegmentationQuality {
  std::int64_t cases = 0, slices = 0, patches = 0;  // slices in 2D, patches in 3D
  std::vector<double> class_dice;                   // mean over cases, classes 1, 2, ...
  double mean_dice = 0;                             // mean of class_dice
};

// Segments the held-out cases with the trained weights (an inference graph of the same model with
// `trained`'s weights loaded); nullopt when the data holds nothing out.
std::optional<SegmentationQuality> evaluate_segmentation(const models::ModelSpec& model,
                                                         const models::ModelConfig& trained_config,
                                                         const result::RunConfig& config,
                                                         const nn::Trainer& trained,
                                                         backend::Backend& be);

// As metrics quality/dice_mean, quality/dice_class_C and quality/held_out_slices (or
// quality/held_out_patches).
void add_segmentation_metrics(result::RunResult& r, const SegmentationQuality& q);

}  // namespace dlbench::runner
