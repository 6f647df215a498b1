// Graph passes: what the ReLU-epilogue passes (fuse_matmul_relu, fuse_conv_relu) rewrite and
// what they leave alone, and the fused graph against the reference (Fusion::kOff): the same
// losses, gradients and weights.
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

namespace dlbench {
namespace {

nn::Graph vgg16(DType compute = DType::kF32) {
  const models::ModelSpec& spec = models::find_model("vgg16");
  models::ModelConfig mc;
  mc.batch = 2;
  mc.size = 32;
  mc.width_divisor = 16;
  mc.compute = compute;
  return spec.build(models::resolve(spec, mc));
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
  ASSERT_EQ(report.rewrites.size(), 2u);
  EXPECT_EQ(report.rewrites[0].first, "fuse_matmul_relu");
  EXPECT_EQ(report.rewrites[0].second, 2);  // fc1 and fc2; fc3 feeds the loss, not a ReLU
  EXPECT_EQ(report.rewrites[1].first, "fuse_conv_relu");
  EXPECT_EQ(report.rewrites[1].second, 13);  // every convolution
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

Steps train(nn::Fusion fusion) {
  auto be = backend::make_backend(Device::cpu());
  nn::TrainerConfig c;
  c.fusion = fusion;
  c.optimizer.learning_rate = 0.01f;
  c.optimizer.weight_decay = 1e-4f;
  nn::Trainer net(vgg16(), *be, c);
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
  nn::Trainer infer(vgg16(), *be, ic);
  source.fill(*be, infer.inputs());
  infer.infer_step();
  s.logits = host(*be, infer.logits());
  return s;
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], 1e-5f + 1e-4f * std::fabs(b[i])) << what << " [" << i << "]";
}

// The fused graph computes what the reference computes: three training steps (so the fused
// backward's in-place ReLU gradient reaches the weights) and inference.
TEST(FuseReluTest, FusedVggTrainsAndInfersAsTheReference) {
  const Steps fused = train(nn::Fusion::kOn), reference = train(nn::Fusion::kOff);
  expect_close(fused.losses, reference.losses, "loss");
  expect_close(fused.grads, reference.grads, "gradients");
  expect_close(fused.weights, reference.weights, "weights");
  expect_close(fused.logits, reference.logits, "logits");
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
