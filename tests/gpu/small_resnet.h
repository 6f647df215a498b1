// The ResNet-50 the GPU tests train: batch 8 of 32x32 images (the CIFAR-10 variant), small
// enough for a test and with every layer kind and fused pattern of the full-size model.
#pragma once

#include "engine/core/run_modes.h"
#include "engine/models/registry.h"
#include "engine/nn/graph.h"

namespace dlbench::gpu_test {

// The graph as built, in `precision`'s compute type.
inline nn::Graph small_resnet50(Precision precision) {
  const models::ModelSpec& info = models::find_model("resnet50");
  models::ModelConfig mc;
  mc.batch = 8;
  mc.size = 32;
  mc.compute = compute_dtype(precision);
  return info.build(models::resolve(info, mc));
}

}  // namespace dlbench::gpu_test
