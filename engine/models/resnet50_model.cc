// ResNet-50 v1.5 (He et al. 2016, with the stride of each downsampling bottleneck on its 3x3
// convolution, as in torchvision and NVIDIA's reference): 25,557,032 parameters and 4.09 GMAC
// per 224x224 image. At 32x32 the CIFAR-10 variant of the published evaluations: a 3x3
// stride-1 stem without max-pool and 10 classes.
#include <cmath>
#include <string>

#include "engine/models/builder.h"
#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

constexpr int kBlocks[4] = {3, 4, 6, 3};
constexpr std::int64_t kWidths[4] = {64, 128, 256, 512};
constexpr std::int64_t kExpansion = 4;

ValueId bottleneck(Builder& b, const std::string& name, ValueId x, std::int64_t width, int stride) {
  std::int64_t in = b.shape(x)[3], out = width * kExpansion;
  ValueId y =
      b.relu(name + ".relu1",
             b.batch_norm(name + ".bn1", b.conv(name + ".conv1", x, width, 1, 1, 0, false)));
  y = b.relu(name + ".relu2",
             b.batch_norm(name + ".bn2", b.conv(name + ".conv2", y, width, 3, stride, 1, false)));
  y = b.batch_norm(name + ".bn3", b.conv(name + ".conv3", y, out, 1, 1, 0, false));
  ValueId shortcut = x;
  if (stride != 1 || in != out)
    shortcut = b.batch_norm(name + ".downsample.bn",
                            b.conv(name + ".downsample.conv", x, out, 1, stride, 0, false));
  return b.relu(name + ".relu3", b.add(name + ".add", y, shortcut));
}

// The CIFAR-10 variant at 32x32, ImageNet at any other size.
std::int64_t classes(int size) {
  return size == 32 ? 10 : 1000;
}

nn::Graph build(const ModelConfig& config) {
  nn::Graph g(config.compute);
  Builder b(g);
  const std::int64_t d = config.width_divisor;
  const bool cifar = config.size == 32;
  ValueId x = b.input(config.batch, config.size, config.size, 3);
  if (cifar) {
    x = b.conv("conv1", x, 64 / d, 3, 1, 1, false);
  } else {
    x = b.conv("conv1", x, 64 / d, 7, 2, 3, false);
  }
  x = b.relu("relu", b.batch_norm("bn1", x));
  if (!cifar) x = b.max_pool("maxpool", x, 3, 2, 1);
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < kBlocks[stage]; ++block) {
      int stride = (stage > 0 && block == 0) ? 2 : 1;
      std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      x = bottleneck(b, name, x, kWidths[stage] / d, stride);
    }
  }
  x = b.global_avg_pool("avgpool", x);
  // The classifier starts with the spread of PyTorch's default Linear init, U(±1/sqrt(k)).
  const float fc_stddev = 1.0f / std::sqrt(3.0f * static_cast<float>(b.shape(x)[3]));
  const std::int64_t n = classes(config.size);
  b.classifier_loss(b.linear("fc", x, n, fc_stddev), config.batch, n);
  return g;
}

ModelSpec spec() {
  ModelSpec s;
  s.name = "resnet50";
  s.description =
      "ResNet-50 v1.5, ImageNet 224x224 (1000 classes); at size 32 the CIFAR-10 variant";
  s.unit = SampleUnit::kImages;  // batches: the spec's defaults, the published 128 and 64
  s.size = {"input size", "pixels", 224, {224, 32}};
  s.build = build;
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
