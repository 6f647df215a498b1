// VGG16 (Simonyan & Zisserman 2015, configuration D): thirteen 3x3 convolutions with bias and
// ReLU in five stages, then 25088 -> 4096 -> 4096 -> classes: 138,357,544 parameters and
// 15.47 GMAC per 224x224 image. Dropout is left out: it changes neither parameters nor
// FLOPs, and a benchmark of synthetic data does not need its regularization.
#include <string>

#include "engine/models/builder.h"
#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

constexpr int kPool = 0;  // marks a 2x2 max-pool in the layer list
constexpr int kLayers[] = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                           kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
constexpr std::int64_t kHidden = 4096;
// The last layer starts N(0, 0.01), as torchvision's VGG does, so the first loss is about
// log(classes); the ReLU layers before it start Kaiming-normal like the convolutions.
constexpr float kClassifierStddev = 0.01f;

nn::Graph build(const ModelConfig& config) {
  nn::Graph g(config.compute);
  Builder b(g);
  const std::int64_t d = config.width_divisor;
  ValueId x = b.input(config.batch, config.size, config.size, 3);
  int conv = 0, stage = 1;
  for (int channels : kLayers) {
    if (channels == kPool) {
      x = b.max_pool("pool" + std::to_string(stage++), x, 2, 2, 0);
      continue;
    }
    std::string name = "conv" + std::to_string(++conv);
    x = b.relu(name + ".relu", b.conv(name, x, channels / d, 3, 1, 1, true));
  }
  x = b.relu("fc1.relu", b.linear("fc1", x, kHidden / d));
  x = b.relu("fc2.relu", b.linear("fc2", x, kHidden / d));
  const std::int64_t classes = config.size == 32 ? 10 : 1000;
  b.classifier_loss(b.linear("fc3", x, classes, kClassifierStddev), config.batch, classes);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "vgg16";
  s.description = "VGG16, ImageNet 224x224 (1000 classes); size 32 (10 classes) for small tests";
  s.unit = SampleUnit::kImages;  // batches: the spec's defaults, the published 128 and 64
  s.size = {"input size", "pixels", 224, {224, 32}};
  s.build = build;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
