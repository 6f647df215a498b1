// 3D U-Net in MLPerf Training's KiTS19 configuration (its reference's Unet3D): 128^3
// single-channel CT patches, 3 classes, channels 32-64-128-256-320. An input block (two 3x3x3
// conv + instance norm + ReLU at 32), four downsampling blocks and a bottleneck (a stride-2
// 3x3x3 conv block, then a stride-1 one; no pooling, as the reference downsamples), five
// upsampling blocks (a 2x2x2 transposed convolution at stride 2, joined along the channels with
// the encoder's features of that size, two conv blocks), and a 1x1x1 convolution to the
// classes. Trained with soft Dice (the background left out) plus per-voxel softmax
// cross-entropy, the reference's DiceCE. Convolutions before an instance norm carry no bias
// (the norm takes out a constant per channel); unlike the reference, neither do the transposed
// convolutions (the conv block after each takes it out as well), 800 parameters fewer.
#include <string>
#include <vector>

#include "engine/data/ct_dataset.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kFilters[] = {32, 64, 128, 256, 320};
constexpr std::int64_t kLevels = 5;   // filters; the bottleneck repeats the last
constexpr std::int64_t kClasses = 3;  // background, kidney, tumour
constexpr int kHalvings = 5;          // the side must divide by 2^5

ValueId conv_block(Builder& b, const std::string& name, ValueId x, std::int64_t channels,
                   int stride) {
  x = b.conv(name + ".conv", x, channels, 3, stride, 1, false);
  return b.relu(name + ".relu", b.instance_norm(name + ".norm", x));
}

// Two conv blocks, the first at `stride`.
ValueId double_block(Builder& b, const std::string& name, ValueId x, std::int64_t channels,
                     int stride) {
  return conv_block(b, name + ".block2", conv_block(b, name + ".block1", x, channels, stride),
                    channels, 1);
}

nn::Graph build(const ModelConfig& config) {
  DLBENCH_CHECK(config.size % (1 << kHalvings) == 0,
                "unet3d: the input size must be a multiple of 32 (five halvings)");
  nn::Graph g(config.compute);
  Builder b(g);
  const std::int64_t d = config.width_divisor;
  const std::int64_t side = config.size;
  auto filters = [d](std::int64_t level) { return std::max<std::int64_t>(1, kFilters[level] / d); };
  ValueId x = b.volume_input(config.batch, side, side, side, 1, data::scene_images(kClasses));
  std::vector<ValueId> skips = {x = double_block(b, "input", x, filters(0), 1)};
  for (std::int64_t i = 1; i < kLevels; ++i)
    skips.push_back(x = double_block(b, "down" + std::to_string(i), x, filters(i), 2));
  x = double_block(b, "bottleneck", x, filters(kLevels - 1), 2);
  for (std::int64_t i = kLevels - 1; i >= 0; --i) {
    const std::string stage = "up" + std::to_string(kLevels - i);
    x = b.conv_transpose(stage + ".upconv", x, filters(i), 2, 2);
    x = double_block(b, stage, b.concat(stage + ".concat", {x, skips[i]}), filters(i), 1);
  }
  b.segmentation_loss(b.conv("head", x, kClasses, 1, 1, 0, true), config.class_weights);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "unet3d";
  s.description =
      "3D U-Net (MLPerf KiTS19: instance norm, strided downsampling), 128^3 single-channel CT "
      "patches, 3 classes; Dice + cross-entropy";
  s.unit = SampleUnit::kVolumes;  // patches
  s.default_train_batch = 2;
  s.default_infer_batch = 2;
  s.size = {"patch side", "voxels", 128, {128, 96, 64, 32}};
  s.build = build;
  s.read_data = data::read_ct_data;  // training patches cut from the cases (ct_patches.h)
  s.data_format = data::kCtDataFormat;
  s.takes_class_weights = true;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
