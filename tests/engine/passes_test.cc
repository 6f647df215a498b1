// Graph passes: what the fusion passes (fuse_bn_add_relu, inference's fold_conv_bn, and the ReLU
// epilogues fuse_bn_relu, fuse_matmul_relu, fuse_conv_relu) rewrite and what they leave alone,
// and the fused graph against the reference (Fusion::kOff): the same losses, gradients, weights
// and logits, for VGG16 and ResNet-50.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/passes/pass.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/batch_norm_values.h"
#include "tests/engine/support/fused_as_reference.h"

namespace dlbench {
namespace {

nn::Graph tiny(const char* model, DType compute = DType::kF32) {
  const models::ModelSpec& spec = models::find_model(model);
  models::ModelConfig mc;
  mc.batch = 2;
  mc.size = 32;
  mc.width_divisor = 16;
  mc.compute = compute;
  return spec.build(models::resolve(spec, mc));
}

nn::Graph vgg16(DType compute = DType::kF32) {
  return tiny("vgg16", compute);
}

nn::Graph resnet50() {
  return tiny("resnet50");
}

// The rewrites a pass made, by name; -1 when it did not run.
int rewrites(const nn::PassReport& report, const std::string& pass) {
  for (const auto& [name, count] : report.rewrites)
    if (name == pass) return count;
  return -1;
}

std::vector<std::string> node_names(const nn::Graph& g) {
  std::vector<std::string> names;
  for (const nn::Node& n : g.nodes()) names.push_back(n.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<float> host(backend::Backend& be, const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  be.to_host(t, out.data());
  return out;
}

TEST(FuseReluTest, FoldsEveryVggReluIntoItsMatmulOrConvolution) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = vgg16();
  const std::size_t nodes = g.nodes().size();
  const std::int64_t parameters = nn::parameter_count(g), macs = nn::forward_macs(g);
  const nn::PassReport report = nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn);
  EXPECT_EQ(rewrites(report, "fuse_matmul_relu"), 2);  // fc1 and fc2; fc3 feeds the loss
  EXPECT_EQ(rewrites(report, "fuse_conv_relu"), 13);   // every convolution
  EXPECT_EQ(rewrites(report, "fuse_bn_relu"), 0);      // VGG16 has no batch norm
  EXPECT_EQ(report.total(), 15);
  EXPECT_EQ(g.nodes().size(), nodes - 15);
  const std::vector<std::string> names = node_names(g);
  EXPECT_TRUE(has(names, "fc1+fc1.relu"));
  EXPECT_TRUE(has(names, "fc2+fc2.relu"));
  EXPECT_FALSE(has(names, "fc1.relu"));
  EXPECT_TRUE(has(names, "fc3"));
  EXPECT_TRUE(has(names, "conv1+conv1.relu"));
  EXPECT_TRUE(has(names, "conv13+conv13.relu"));
  EXPECT_FALSE(has(names, "conv1.relu"));
  // The same parameters in the same order, and the same work.
  EXPECT_EQ(nn::parameter_count(g), parameters);
  EXPECT_EQ(nn::forward_macs(g), macs);
  EXPECT_EQ(g.params().front().name, "conv1.weight");
  EXPECT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "fc3");
}

// Every residual tail (bn3 + add + relu3) becomes one batch norm with the shortcut as its second
// input, and every other BN -> ReLU one batch norm with a ReLU: the stem's and two per block.
// In training the four downsampling tails take the shortcut's batch norm in too.
TEST(FuseBatchNormTest, FoldsEveryResnetTailAndRelu) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = resnet50();
  const std::size_t nodes = g.nodes().size();
  const std::int64_t parameters = nn::parameter_count(g), macs = nn::forward_macs(g);
  const nn::PassReport report = nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn);
  EXPECT_EQ(rewrites(report, "fuse_dual_bn_add_relu"), 4);
  EXPECT_EQ(rewrites(report, "fuse_bn_add_relu"), 12);
  EXPECT_EQ(rewrites(report, "fuse_bn_relu"), 1 + 2 * 16);
  EXPECT_EQ(rewrites(report, "fuse_conv_relu"), 0);  // every convolution feeds a batch norm
  // The CPU's batch norm sums x itself: no convolution hands it statistics there.
  EXPECT_EQ(rewrites(report, "fuse_conv_bn_stats"), 0);
  EXPECT_EQ(g.nodes().size(), nodes - 2 * 16 - 33 - 4);
  const std::vector<std::string> names = node_names(g);
  EXPECT_TRUE(has(names, "bn1+relu"));
  EXPECT_TRUE(has(names, "layer1.0.bn1+layer1.0.relu1"));
  EXPECT_TRUE(has(names, "layer1.1.bn3+layer1.1.add+layer1.1.relu3"));
  EXPECT_TRUE(has(names, "layer4.2.bn3+layer4.2.add+layer4.2.relu3"));
  // A downsampling block's tail normalizes the shortcut convolution's output itself.
  EXPECT_FALSE(has(names, "layer1.0.downsample.bn"));
  int dual = 0;
  for (const nn::Node& n : g.nodes()) {
    if (n.name == "layer1.0.bn3+layer1.0.downsample.bn+layer1.0.add+layer1.0.relu3") {
      ASSERT_EQ(n.inputs.size(), 2u);
      EXPECT_EQ(g.value(n.inputs[1]).name, "layer1.0.downsample.conv");
      EXPECT_EQ(n.params.size(), 4u);  // gamma and beta of both batch norms
    }
    if (n.name == "layer1.1.bn3+layer1.1.add+layer1.1.relu3") {
      EXPECT_STREQ(n.layer->kind(), "batch_norm+add+relu");
    }
    dual += std::string(n.layer->kind()) == "dual_batch_norm+add+relu" ? 1 : 0;
  }
  EXPECT_EQ(dual, 4);
  EXPECT_FALSE(has(names, "layer1.0.add"));
  EXPECT_EQ(nn::parameter_count(g), parameters);
  EXPECT_EQ(nn::forward_macs(g), macs);
}

// Training keeps each fused ReLU's bit mask as the batch norm's state; inference does not.
TEST(FuseBatchNormTest, OnlyTrainingKeepsTheReluMask) {
  auto be = backend::make_backend(Device::cpu());
  for (Mode mode : {Mode::kTrain, Mode::kInfer}) {
    nn::Graph g = resnet50();
    nn::apply_passes(g, {*be, mode}, nn::Fusion::kOn);
    for (const nn::Node& n : g.nodes()) {
      if (n.name != "bn1+relu") continue;
      const std::vector<nn::StateDecl> state = n.layer->state(*be);
      ASSERT_EQ(state.size(), mode == Mode::kTrain ? 5u : 4u);
      if (mode == Mode::kTrain) {
        EXPECT_EQ(state.back().name, "relu_mask");
        const Shape out = g.value(n.output()).shape;
        EXPECT_EQ(state.back().bytes, static_cast<std::size_t>((out.numel() + 31) / 32 * 4));
      }
    }
  }
}

// Inference folds every batch norm into its convolution: the stem's, three per block (the third
// with its residual tail, which becomes the convolution's epilogue with the shortcut as a second
// input) and the four downsampling shortcuts'; the ReLUs after the others become the
// convolutions' epilogues. Training folds none.
TEST(FoldConvBatchNormTest, FoldsEveryResnetBatchNorm) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = resnet50();
  const std::size_t nodes = g.nodes().size();
  const std::int64_t parameters = nn::parameter_count(g), macs = nn::forward_macs(g);
  const nn::PassReport report = nn::apply_passes(g, {*be, Mode::kInfer}, nn::Fusion::kOn);
  EXPECT_EQ(rewrites(report, "fuse_bn_add_relu"), 16);
  EXPECT_EQ(rewrites(report, "fold_conv_bn"), 1 + 3 * 16 + 4);
  EXPECT_EQ(rewrites(report, "fuse_bn_relu"), 0);
  EXPECT_EQ(rewrites(report, "fuse_conv_relu"), 1 + 2 * 16);
  EXPECT_EQ(g.nodes().size(), nodes - 2 * 16 - 53 - 33);
  const std::vector<std::string> names = node_names(g);
  EXPECT_TRUE(has(names, "conv1+bn1+relu"));
  EXPECT_TRUE(has(names, "layer1.0.conv2+layer1.0.bn2+layer1.0.relu2"));
  EXPECT_TRUE(has(names, "layer1.0.downsample.conv+layer1.0.downsample.bn"));
  const std::string tail = "layer1.0.conv3+layer1.0.bn3+layer1.0.add+layer1.0.relu3";
  EXPECT_TRUE(has(names, tail));
  for (const nn::Node& n : g.nodes()) {
    if (n.name == tail) {
      EXPECT_STREQ(n.layer->kind(), "conv2d+batch_norm+add+relu");
      ASSERT_EQ(n.inputs.size(), 2u);
      EXPECT_EQ(g.value(n.inputs[1]).name, "layer1.0.downsample.conv+layer1.0.downsample.bn");
    }
    if (n.name == "conv1+bn1+relu") {
      EXPECT_STREQ(n.layer->kind(), "conv2d+batch_norm+relu");
      // The convolution's weight, then the batch norm's gamma and beta.
      ASSERT_EQ(n.params.size(), 3u);
      EXPECT_EQ(g.params()[static_cast<std::size_t>(n.params[1])].name, "bn1.gamma");
      EXPECT_EQ(n.layer->state(*be).size(), 4u);  // running mean, variance, folded weight, bias
    }
    if (n.name == "layer1.0.downsample.conv+layer1.0.downsample.bn") {
      EXPECT_STREQ(n.layer->kind(), "conv2d+batch_norm");
    }
  }
  EXPECT_EQ(nn::parameter_count(g), parameters);
  EXPECT_EQ(nn::forward_macs(g), macs);

  nn::Graph trained = resnet50();
  EXPECT_EQ(
      rewrites(nn::apply_passes(trained, {*be, Mode::kTrain}, nn::Fusion::kOn), "fold_conv_bn"), 0);
}

TEST(FuseReluTest, FusionOffLeavesTheGraphAsBuilt) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = vgg16();
  const std::vector<std::string> before = node_names(g);
  EXPECT_TRUE(nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOff).rewrites.empty());
  EXPECT_EQ(node_names(g), before);
}

// The CPU backend runs matmuls and convolutions in f32 only: an f16 graph is left alone there.
TEST(FuseReluTest, OnlyWhatTheBackendSupports) {
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = vgg16(DType::kF16);
  const std::size_t nodes = g.nodes().size();
  EXPECT_EQ(nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn).total(), 0);
  EXPECT_EQ(g.nodes().size(), nodes);
}

// x -> fc -> relu, where fc's output is also read elsewhere (or is a marked output): the
// pre-activation value is still needed, so nothing is fused.
TEST(FuseReluTest, LeavesALinearWhoseOutputHasOtherReaders) {
  auto be = backend::make_backend(Device::cpu());
  for (bool marked : {false, true}) {
    nn::Graph g;
    const nn::ValueId x = g.add_input({"x", {2, 4}, DType::kF32, data::normal(0, 1), "x"});
    backend::MatmulParams p;
    p.m = 2, p.k = 4, p.n = 4, p.bias = true;
    const nn::ValueId h = g.add("fc", std::make_unique<nn::Linear>(p), {x});
    const nn::ValueId r = g.add("fc.relu", std::make_unique<nn::Relu>(), {h});
    if (marked) {
      g.mark_output(h);
      g.mark_output(r);
    } else {
      g.mark_output(g.add("sum", std::make_unique<nn::Add>(), {h, r}));
    }
    EXPECT_EQ(nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn).total(), 0) << marked;
    EXPECT_EQ(g.nodes().size(), marked ? 2u : 3u);
  }
}

struct Steps {
  std::vector<float> losses, weights, grads, logits;
};

Steps train(nn::Graph (*model)(), nn::Fusion fusion) {
  auto be = backend::make_backend(Device::cpu());
  nn::TrainerConfig c;
  c.fusion = fusion;
  c.optimizer.learning_rate = 0.01f;
  c.optimizer.weight_decay = 1e-4f;
  nn::Trainer net(model(), *be, c);
  data::SyntheticSource source(net.graph().input_specs(), 7);
  Steps s;
  for (int i = 0; i < 3; ++i) {
    source.fill(*be, net.inputs());
    net.train_step();
    s.losses.push_back(net.loss());
  }
  s.weights = host(*be, net.flat_weights());
  s.grads = host(*be, net.flat_grads());
  nn::TrainerConfig ic = c;
  ic.mode = Mode::kInfer;
  nn::Trainer infer(model(), *be, ic);
  source.fill(*be, infer.inputs());
  infer.infer_step();
  s.logits = host(*be, infer.logits());
  return s;
}

using testing::expect_close;

// The fused graph computes what the reference computes: three training steps (so the fused
// backward's in-place ReLU gradient reaches the weights) and inference.
void expect_fused_as_reference(nn::Graph (*model)()) {
  const Steps fused = train(model, nn::Fusion::kOn), reference = train(model, nn::Fusion::kOff);
  expect_close(fused.losses, reference.losses, "loss");
  expect_close(fused.grads, reference.grads, "gradients");
  expect_close(fused.weights, reference.weights, "weights");
  expect_close(fused.logits, reference.logits, "logits");
}

TEST(FuseReluTest, FusedVggTrainsAndInfersAsTheReference) {
  expect_fused_as_reference([] { return vgg16(); });
}

// The batch norms' tails: the mask-driven backward and the residual's gradient reach the
// weights as the unfused ReLU, add and batch norm backward do.
TEST(FuseBatchNormTest, FusedResnetTrainsAndInfersAsTheReference) {
  expect_fused_as_reference(resnet50);
}

// With gammas and betas away from 1 and 0, set after the trainer is built (the fold happens
// before the first forward), the folded graph infers what the reference infers.
TEST(FoldConvBatchNormTest, FoldedResnetInfersAsTheReference) {
  auto be = backend::make_backend(Device::cpu());
  std::vector<float> logits[2];
  for (nn::Fusion fusion : {nn::Fusion::kOn, nn::Fusion::kOff}) {
    nn::TrainerConfig c;
    c.mode = Mode::kInfer;
    c.fusion = fusion;
    nn::Trainer net(resnet50(), *be, c);
    test_support::randomize_batch_norm(*be, net, 5);
    data::SyntheticSource source(net.graph().input_specs(), 7);
    source.fill(*be, net.inputs());
    net.infer_step();
    logits[fusion == nn::Fusion::kOn ? 0 : 1] = host(*be, net.logits());
  }
  expect_close(logits[0], logits[1], "logits");
}

TEST(FuseReluTest, TheTrainerReportsWhatItFused) {
  auto be = backend::make_backend(Device::cpu());
  nn::TrainerConfig c;
  c.fusion = nn::Fusion::kOn;
  nn::Trainer net(vgg16(), *be, c);
  EXPECT_EQ(net.passes().total(), 15);
  int fused_linear = 0, fused_conv = 0;
  for (const nn::LayerSummary& l : net.layer_summaries()) {
    fused_linear += l.kind == "linear+relu";
    fused_conv += l.kind == "conv2d+relu";
  }
  EXPECT_EQ(fused_linear, 2);
  EXPECT_EQ(fused_conv, 13);
  c.fusion = nn::Fusion::kOff;
  EXPECT_EQ(nn::Trainer(vgg16(), *be, c).passes().total(), 0);
}

TEST(FusionTest, ParsesOnAndOffOnly) {
  EXPECT_EQ(nn::parse_fusion("on"), nn::Fusion::kOn);
  EXPECT_EQ(nn::parse_fusion("off"), nn::Fusion::kOff);
  EXPECT_THROW(nn::parse_fusion("yes"), Error);
}

}  // namespace
}  // namespace dlbench
