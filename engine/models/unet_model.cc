// U-Net (Ronneberger et al. 2015) with same-padded 3x3 convolutions and batch norm, as the
// published KiTS evaluations train it on CT slices: four stages down (two conv + batch norm +
// ReLU, then a 2x2 max-pool), channels 64-128-256-512 and 1024 at the bottleneck, four stages
// up (a 2x2 transposed convolution at stride 2, the matching encoder features joined along the
// channels, two conv + batch norm + ReLU), and a 1x1 convolution to the classes (background,
// kidney, tumour). Trained with soft Dice (the background left out) plus per-pixel softmax
// cross-entropy. The convolutions before a batch norm and the transposed convolutions carry no
// bias (the batch norm after them takes out a constant per channel); the head has one.
#include <string>
#include <vector>

#include "engine/data/ct_dataset.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kChannels[] = {64, 128, 256, 512, 1024};
constexpr std::int64_t kClasses = 3;  // background, kidney, tumour
constexpr std::int64_t kStages = 4;   // the input side must divide by 2^4

ValueId double_conv(Builder& b, const std::string& name, ValueId x, std::int64_t channels) {
  for (int k = 1; k <= 2; ++k) {
    const std::string layer = name + ".conv" + std::to_string(k);
    x = b.relu(
        name + ".relu" + std::to_string(k),
        b.batch_norm(name + ".bn" + std::to_string(k), b.conv(layer, x, channels, 3, 1, 1, false)));
  }
  return x;
}

nn::Graph build(const ModelConfig& config) {
  DLBENCH_CHECK(config.size % (1 << kStages) == 0,
                "unet: the input size must be a multiple of 16 (four 2x2 poolings)");
  nn::Graph g(config.compute);
  Builder b(g);
  const std::int64_t d = config.width_divisor;
  ValueId x = b.input(config.batch, config.size, config.size, 1, data::scene_images(kClasses));
  std::vector<ValueId> skips;
  for (std::int64_t i = 0; i < kStages; ++i) {
    const std::string stage = "down" + std::to_string(i + 1);
    skips.push_back(x = double_conv(b, stage, x, kChannels[i] / d));
    x = b.max_pool(stage + ".pool", x, 2, 2, 0);
  }
  x = double_conv(b, "bottleneck", x, kChannels[kStages] / d);
  for (std::int64_t i = kStages - 1; i >= 0; --i) {
    const std::string stage = "up" + std::to_string(i + 1);
    x = b.conv_transpose(stage + ".upconv", x, kChannels[i] / d, 2, 2);
    x = double_conv(b, stage, b.concat(stage + ".concat", {skips[i], x}), kChannels[i] / d);
  }
  b.segmentation_loss(b.conv("head", x, kClasses, 1, 1, 0, true), config.class_weights);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "unet";
  s.description =
      "U-Net (2D, batch norm), 512x512 single-channel CT slices, 3 classes; Dice + cross-entropy";
  s.unit = SampleUnit::kImages;  // slices
  s.default_train_batch = 8;
  s.default_infer_batch = 8;
  s.size = {"input size", "pixels", 512, {512, 256, 128, 64, 32}};
  s.build = build;
  s.read_data = data::read_ct_data;
  s.data_format = data::kCtDataFormat;
  s.takes_class_weights = true;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
