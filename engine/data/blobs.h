// Synthetic segmentation scenes: nested ellipses (ellipsoids in 3D) on a background, so a
// segmentation model has something to learn (white noise labels would make its loss meaningless).
// Each sample holds one to three "organs" (class 1), and inside each, with even odds, a smaller
// "lesion" of the next class, and so on up to the last class (KiTS: background, kidney, tumour).
// The image is the class map made visible: a mean intensity per class plus Gaussian noise, in every
// channel.
#pragma once

#include <cstdint>
#include <vector>

namespace dlbench::data {

// Labels [n, h, w] in [0, classes), deterministic per seed.
std::vector<std::int32_t> blob_labels(std::int64_t n, std::int64_t h, std::int64_t w,
                                      std::int64_t classes, std::uint64_t seed);

// Labels [n, d, h, w] of the same kind in 3D: ellipsoids (volumetric), or with `volumetric`
// false the images above stacked as depth 1 (blob_labels is that call).
std::vector<std::int32_t> blob_volume_labels(std::int64_t n, std::int64_t d, std::int64_t h,
                                             std::int64_t w, std::int64_t classes,
                                             std::uint64_t seed, bool volumetric = true);

// An image [n, h, w, channels] (or a volume [n, d, h, w, channels]) of those labels: intensity
// class - (classes - 1) / 2 plus noise N(0, 0.5) drawn with noise_seed.
std::vector<float> blob_images(const std::vector<std::int32_t>& labels, std::int64_t channels,
                               std::int64_t classes, std::uint64_t noise_seed);

}  // namespace dlbench::data
