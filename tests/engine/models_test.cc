// The architectures are exactly the published ones: parameter counts and MACs.
#include <gtest/gtest.h>

#include "engine/models/registry.h"

namespace dlbench::models {
namespace {

nn::Graph build(const std::string& name, std::int64_t batch, int input, Mode mode = Mode::kTrain) {
  const ModelSpec& m = find_model(name);
  ModelConfig c;
  c.batch = batch;
  c.size = input;
  c.mode = mode;
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

// U-Net with batch norm, bias-free convolutions before each batch norm and bias-free transposed
// convolutions: per stage two 3x3 convolutions (9 c_in c_out weights) and two batch norms (2
// c_out each); the decoder's first convolution reads the skip and the upsampled features (2c)
// after a 2x2 transposed convolution (4 c_in c_out); the head a 1x1 convolution with bias.
TEST(ModelsTest, UNetHasTheComputedParameterCountAndScoresEveryPixel) {
  nn::Graph g = build("unet", 1, 512);
  const std::int64_t ch[] = {64, 128, 256, 512, 1024};
  auto stage = [](std::int64_t in, std::int64_t out) {
    return 9 * in * out + 9 * out * out + 4 * out;
  };
  std::int64_t expected = stage(1, 64);
  for (int i = 1; i < 5; ++i) expected += stage(ch[i - 1], ch[i]);
  for (int i = 3; i >= 0; --i) expected += 4 * ch[i + 1] * ch[i] + stage(2 * ch[i], ch[i]);
  expected += 64 * 3 + 3;
  EXPECT_EQ(nn::parameter_count(g), expected);
  EXPECT_EQ(expected, 31'035'651);
  EXPECT_EQ(g.value(g.outputs().at(0)).shape, (Shape{1, 512, 512, 3}));
  EXPECT_EQ(g.value(g.input("labels")).shape, (Shape{1, 512, 512}));
  EXPECT_EQ(g.value(g.input("labels")).dtype, DType::kI32);
}

// 3D U-Net as MLPerf's KiTS19 reference: per block two 3x3x3 convolutions (27 c_in c_out
// weights, no bias) and two instance norms (2 c_out each); four stride-2 blocks down and a
// stride-2 bottleneck; five blocks up, each a 2x2x2 transposed convolution (8 c_in c_out, no
// bias here: the reference's 800 biases fewer) before a block that reads the upsampled features
// and the skip (2 c_out); the head a 1x1x1 convolution with bias. One volume in, one score per
// voxel out.
TEST(ModelsTest, UNet3dHasTheComputedParameterCountAndScoresEveryVoxel) {
  nn::Graph g = build("unet3d", 1, 64);
  const std::int64_t f[] = {32, 64, 128, 256, 320};
  auto block = [](std::int64_t in, std::int64_t out) {
    return 27 * in * out + 27 * out * out + 4 * out;
  };
  std::int64_t expected = block(1, 32);
  for (int i = 1; i < 5; ++i) expected += block(f[i - 1], f[i]);
  expected += block(320, 320);
  expected += 8 * 320 * 320 + block(2 * 320, 320);
  for (int i = 3; i >= 0; --i) expected += 8 * f[i + 1] * f[i] + block(2 * f[i], f[i]);
  expected += 32 * 3 + 3;
  EXPECT_EQ(nn::parameter_count(g), expected);
  EXPECT_EQ(expected, 31'189'443);
  EXPECT_EQ(g.value(g.outputs().at(0)).shape, (Shape{1, 64, 64, 64, 3}));
  EXPECT_EQ(g.value(g.input("labels")).shape, (Shape{1, 64, 64, 64}));
  EXPECT_EQ(g.value(g.input("images")).shape, (Shape{1, 64, 64, 64, 1}));
}

// NeuMF as NVIDIA's reference builds it for MovieLens-1M (6,040 users, 3,706 items): tables of
// 64 (GMF) and 128 (MLP) columns per user and item, MLP 256 -> 256 -> 128 -> 64, one logit from
// the 64 + 64 columns of both branches.
TEST(ModelsTest, NcfHasTheReferenceParameterCountAndMacs) {
  nn::Graph g = build("ncf", 1, 0, Mode::kInfer);
  const std::int64_t tables = (6040 + 3706) * (64 + 128);
  const std::int64_t mlp = 256 * 256 + 256 + 256 * 128 + 128 + 128 * 64 + 64;
  EXPECT_EQ(nn::parameter_count(g), tables + mlp + 128 + 1);
  EXPECT_EQ(nn::forward_macs(g), 256 * 256 + 256 * 128 + 128 * 64 + 128);  // per pair
  EXPECT_EQ(g.value(g.outputs().at(0)).shape, (Shape{1, 1}));
  EXPECT_FALSE(g.has_loss());
  const ModelSpec& ncf = find_model("ncf");
  EXPECT_EQ(ncf.unit, SampleUnit::kPairs);
  EXPECT_EQ(ncf.default_train_batch, 256);
  EXPECT_EQ(ncf.default_infer_batch, 100);
  EXPECT_EQ(ncf.default_optimizer.kind, nn::OptimizerConfig::Kind::kAdam);
  EXPECT_EQ(ncf.default_optimizer.sparse_kind, nn::OptimizerConfig::Kind::kSparseAdam);
  // Inference scores the pairs it is given.
  ASSERT_EQ(g.input_specs().size(), 2u);
  EXPECT_EQ(g.input_specs()[0].dtype, DType::kI32);
  EXPECT_EQ(g.input_specs()[0].values.b, 6040);
  EXPECT_EQ(g.input_specs()[1].values.b, 3706);
  EXPECT_EQ(g.input_specs()[1].values.kind, data::Distribution::Kind::kZipf);
}

// Training takes positives and samples 4 negatives per positive on the device: at the published
// batch of 256, 52 positives (ceil(256 / 5)) and 204 negatives, with the same parameters.
TEST(ModelsTest, NcfTrainsOnPositivesAndSampledNegatives) {
  nn::Graph g = build("ncf", 256, 0);
  EXPECT_EQ(nn::parameter_count(g), nn::parameter_count(build("ncf", 256, 0, Mode::kInfer)));
  ASSERT_EQ(g.input_specs().size(), 2u);
  EXPECT_EQ(g.input_specs()[0].shape, (Shape{52}));
  EXPECT_EQ(g.input_specs()[1].shape, (Shape{52}));
  const nn::Node& sampler = g.nodes().at(0);
  EXPECT_STREQ(sampler.layer->kind(), "negative_sampler");
  ASSERT_EQ(sampler.outputs.size(), 3u);
  EXPECT_EQ(g.value(sampler.outputs[0]).shape, (Shape{256}));
  EXPECT_EQ(g.value(sampler.outputs[2]).shape, (Shape{256, 1}));
  EXPECT_TRUE(g.has_loss());
  EXPECT_EQ(nn::forward_macs(g), 256 * nn::forward_macs(build("ncf", 1, 0, Mode::kInfer)));
  // A batch of one is its positive alone.
  EXPECT_EQ(build("ncf", 1, 0).input_specs()[0].shape, (Shape{1}));
}

// Two text8-sized tables of dimension 128; training scores each pair against its context and 5
// negatives drawn on the device, inference against its context alone.
TEST(ModelsTest, Word2VecHasTwoTablesAndScoresSixCandidatesPerPair) {
  nn::Graph train = build("word2vec", 256, 0);
  EXPECT_EQ(nn::parameter_count(train), 2 * 71290 * 128);
  EXPECT_EQ(nn::forward_macs(train), 256 * 6 * 128);
  EXPECT_TRUE(train.has_loss());
  EXPECT_STREQ(train.nodes().at(0).layer->kind(), "candidate_sampler");
  nn::Graph infer = build("word2vec", 256, 0, Mode::kInfer);
  EXPECT_EQ(nn::parameter_count(infer), nn::parameter_count(train));
  EXPECT_EQ(nn::forward_macs(infer), 256 * 128);
  EXPECT_EQ(infer.value(infer.outputs().at(0)).shape, (Shape{256, 1}));
  EXPECT_EQ(find_model("word2vec").unit, SampleUnit::kPairs);
}

// The variants: dimension 300 (both tables wider), and 64 negatives (65 candidates per pair).
TEST(ModelsTest, Word2VecVariantsChangeTheDimensionOrTheNegatives) {
  nn::Graph wide = build("word2vec-d300", 256, 0);
  EXPECT_EQ(nn::parameter_count(wide), 2 * 71290 * 300);
  EXPECT_EQ(nn::forward_macs(wide), 256 * 6 * 300);
  nn::Graph many = build("word2vec-neg64", 256, 0);
  EXPECT_EQ(nn::parameter_count(many), 2 * 71290 * 128);
  EXPECT_EQ(nn::forward_macs(many), 256 * 65 * 128);
  EXPECT_EQ(nn::forward_macs(build("word2vec-neg64", 256, 0, Mode::kInfer)), 256 * 128);
}

TEST(ModelsTest, MacsScaleWithTheBatch) {
  EXPECT_EQ(nn::forward_macs(build("vgg16", 4, 224)), 4 * nn::forward_macs(build("vgg16", 1, 224)));
}

TEST(ModelsTest, TheRegistryListsEveryModelFileSortedByName) {
  // resnet50 and vgg16 come from the models library, registry-probe from this test binary
  // (tests/engine/models/registry_probe_model.cc): whole-archive linking kept every registrar.
  std::vector<std::string> names;
  for (const ModelSpec* m : ModelRegistry::instance().all()) names.push_back(m->name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"bert-base", "bert-large", "gnmt", "ncf", "registry-probe",
                                      "resnet50", "transformer", "unet", "unet3d", "vgg16",
                                      "word2vec", "word2vec-d300", "word2vec-neg64"}));
  EXPECT_EQ(
      model_names(),
      "bert-base, bert-large, gnmt, ncf, registry-probe, resnet50, transformer, unet, unet3d, "
      "vgg16, "
      "word2vec, word2vec-d300, word2vec-neg64");
}

TEST(ModelsTest, ASpecDescribesTheModelWithoutBuildingIt) {
  const ModelSpec& resnet = find_model("resnet50");
  EXPECT_EQ(resnet.unit, SampleUnit::kImages);
  EXPECT_EQ(resnet.default_train_batch, 128);
  EXPECT_EQ(resnet.default_infer_batch, 64);
  EXPECT_EQ(resnet.size.default_value, 224);
  EXPECT_EQ(resolve(resnet, ModelConfig{}).size, 224);
  EXPECT_EQ(samples_per_step(resnet, resolve(resnet, ModelConfig{3})), 3);
  // The labels' range comes from the graph's input spec, not from a config field.
  nn::Graph g = build("resnet50", 2, 32);
  ASSERT_EQ(g.input_specs().size(), 2u);
  EXPECT_EQ(g.input_specs()[1].name, "labels");
  EXPECT_EQ(g.input_specs()[1].values.b, 10);
}

TEST(ModelsTest, AModelWithoutASizeCountsItsOwnSamples) {
  const ModelSpec& probe = find_model("registry-probe");
  EXPECT_STREQ(to_string(probe.unit), "tokens");
  ModelConfig c;
  c.batch = 6;
  const ModelConfig resolved = resolve(probe, c);
  EXPECT_EQ(resolved.size, 0);
  EXPECT_EQ(samples_per_step(probe, resolved), 24);
  nn::Graph g = probe.build(resolved);
  EXPECT_EQ(nn::parameter_count(g), 8 * 3 + 3);
  c.size = 16;  // it takes no size
  try {
    resolve(probe, c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("takes no sequence length"), std::string::npos)
        << e.what();
  }
}

TEST(ModelsTest, RegisteringANameTwiceIsAnInternalError) {
  ModelSpec again = find_model("vgg16");
  try {
    ModelRegistry::instance().add(again);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
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
  c.size = 100;
  try {
    resolve(find_model("resnet50"), c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(e.hint().find("224, 32 pixels"), std::string::npos) << e.hint();
    // The engine names the setting; the CLI adds its flag.
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
  c.size = 224;
  c.batch = 0;
  EXPECT_THROW(resolve(find_model("resnet50"), c), Error);
}

}  // namespace
}  // namespace dlbench::models
