// The architectures are exactly the published ones: parameter counts and MACs.
#include <gtest/gtest.h>

#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

nn::Graph build(const std::string& name, std::int64_t batch, int input) {
  const ModelInfo& m = find_model(name);
  ModelConfig c;
  c.batch = batch;
  c.input_size = input;
  return m.build(resolve(m, c));
}

TEST(ModelsTest, ResNet50HasTheTorchvisionParameterCountAndMacs) {
  nn::Graph g = build("resnet50", 1, 224);
  EXPECT_EQ(nn::parameter_count(g), 25'557'032);
  // 4.09 GMAC per image (convolutions and the classifier).
  EXPECT_NEAR(static_cast<double>(nn::forward_macs(g)), 4.09e9, 0.005e9);
  EXPECT_EQ(g.value(g.outputs().at(0)).shape, (Shape{1, 1000}));
}

TEST(ModelsTest, ResNet50TrainingFlopsMatchThePublishedFigure) {
  // Training = forward + backward-weights + backward-data except for the first convolution,
  // whose input (the images) needs no gradient: about 24.3 GFLOP per image.
  nn::Graph g = build("resnet50", 1, 224);
  EXPECT_NEAR(2.0 * static_cast<double>(nn::train_macs(g)), 24.3e9, 0.05e9);
}

TEST(ModelsTest, ResNet50CifarVariant) {
  nn::Graph g = build("resnet50", 2, 32);
  EXPECT_EQ(g.value(g.outputs().at(0)).shape, (Shape{2, 10}));
  // Stem: one 3x3 conv 3->64 instead of 7x7 (9408 -> 1728 weights), fc 2048x10 instead of
  // 2048x1000: 25,557,032 - 9408 + 1728 - 2048*990 - 990.
  EXPECT_EQ(nn::parameter_count(g), 25'557'032 - 9408 + 1728 - 2048 * 990 - 990);
  // No max-pool: layer1 runs at 32x32.
  bool has_max_pool = false;
  for (const auto& n : g.nodes()) has_max_pool |= std::string(n.layer->kind()) == "max_pool";
  EXPECT_FALSE(has_max_pool);
}

TEST(ModelsTest, Vgg16HasThePublishedParameterCountAndMacs) {
  nn::Graph g = build("vgg16", 1, 224);
  EXPECT_EQ(nn::parameter_count(g), 138'357'544);
  EXPECT_NEAR(static_cast<double>(nn::forward_macs(g)), 15.47e9, 0.005e9);
}

TEST(ModelsTest, MacsScaleWithTheBatch) {
  EXPECT_EQ(nn::forward_macs(build("vgg16", 4, 224)), 4 * nn::forward_macs(build("vgg16", 1, 224)));
}

TEST(ModelsTest, BadConfigurationsAreUsageErrors) {
  try {
    find_model("resnet51");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.hint().find("resnet50"), std::string::npos);
  }
  ModelConfig c;
  c.batch = 1;
  c.input_size = 100;
  EXPECT_THROW(resolve(find_model("resnet50"), c), Error);
  c.input_size = 224;
  c.batch = 0;
  EXPECT_THROW(resolve(find_model("resnet50"), c), Error);
}

}  // namespace
}  // namespace dlbench::models
