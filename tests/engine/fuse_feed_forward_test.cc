// fuse_feed_forward: which Linear -> GELU -> Linear chains it takes into one layer (BERT's
// feed-forwards, in training and inference; nothing where the GELU's input or output has another
// reader), and the fused tiny BERT against the reference graph (Fusion::kOff): the same losses,
// gradients and weights over three training steps, and the same encoder output in inference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/gelu.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "engine/nn/passes/pass.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/fused_as_reference.h"

namespace dlbench {
namespace {

constexpr int kLayers = 12;  // bert-base's

nn::Graph tiny_bert(Mode mode) {
  const models::ModelSpec& spec = models::find_model("bert-base");
  models::ModelConfig mc;
  mc.batch = 2, mc.size = 32, mc.width_divisor = 16, mc.mode = mode;
  return spec.build(models::resolve(spec, mc));
}

int rewrites(const nn::PassReport& report) {
  for (const auto& [name, count] : report.rewrites)
    if (name == "fuse_feed_forward") return count;
  return -1;
}

int count_kind(const nn::Graph& g, const std::string& kind) {
  int n = 0;
  for (const nn::Node& node : g.nodes()) n += node.layer->kind() == kind;
  return n;
}

// Every layer's feed-forward becomes one layer; the MLM head's GELU feeds a layer norm and stays.
TEST(FuseFeedForwardTest, TakesEveryFeedForwardOfBert) {
  auto be = backend::make_backend(Device::cpu());
  for (Mode mode : {Mode::kTrain, Mode::kInfer}) {
    nn::Graph g = tiny_bert(mode);
    const int head = mode == Mode::kTrain ? 1 : 0;
    ASSERT_EQ(count_kind(g, "gelu"), kLayers + head) << to_string(mode);
    const int linears = count_kind(g, "linear");
    EXPECT_EQ(rewrites(nn::apply_passes(g, {*be, mode}, nn::Fusion::kOn)), kLayers);
    EXPECT_EQ(count_kind(g, "feed_forward"), kLayers) << to_string(mode);
    EXPECT_EQ(count_kind(g, "gelu"), head) << to_string(mode);
    EXPECT_EQ(count_kind(g, "linear"), linears - 2 * kLayers) << to_string(mode);
  }
}

// x -> pre -> gelu -> fc, where pre (the GELU's input) or h (its output) is also read by an add:
// the fused backward would overwrite pre's gradient, or h's gradient is needed, so nothing fuses.
TEST(FuseFeedForwardTest, LeavesAGeluWhoseInputOrOutputHasAnotherReader) {
  auto be = backend::make_backend(Device::cpu());
  for (bool input_shared : {false, true}) {
    nn::Graph g;
    const nn::ValueId x = g.add_input({"x", {2, 8}, DType::kF32, data::normal(0, 1), "x"});
    backend::MatmulParams p;
    p.m = 2, p.k = 8, p.n = 8, p.bias = true;
    const nn::ValueId pre = g.add("inner", std::make_unique<nn::Linear>(p), {x});
    const nn::ValueId h = g.add("gelu", std::make_unique<nn::Gelu>(), {pre});
    const nn::ValueId y = g.add("outer", std::make_unique<nn::Linear>(p), {h});
    g.mark_output(g.add("sum", std::make_unique<nn::Add>(), {y, input_shared ? pre : h}));
    EXPECT_EQ(rewrites(nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn)), 0)
        << input_shared;
    EXPECT_EQ(count_kind(g, "gelu"), 1) << input_shared;
  }
}

// linear, GELU, linear, GELU, linear: the middle linear ends the first block, so the second
// GELU and the last linear stay as they are; and the result trains as the reference does.
TEST(FuseFeedForwardTest, AChainOfBlocksFusesItsFirstBlockOnly) {
  auto build = [] {
    nn::Graph g;
    const nn::ValueId x = g.add_input({"x", {4, 8}, DType::kF32, data::normal(0, 1), "x"});
    const nn::ValueId labels =
        g.add_input({"labels", {4}, DType::kI32, data::uniform_int(0, 8), "labels"});
    backend::MatmulParams p;
    p.m = 4, p.k = 8, p.n = 8, p.bias = true;
    nn::ValueId v = x;
    for (int i = 0; i < 3; ++i) {
      if (i > 0) v = g.add("gelu" + std::to_string(i), std::make_unique<nn::Gelu>(), {v});
      v = g.add("fc" + std::to_string(i), std::make_unique<nn::Linear>(p), {v});
    }
    g.mark_output(v);
    g.mark_output(g.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(), {v, labels}));
    return g;
  };
  auto be = backend::make_backend(Device::cpu());
  nn::Graph g = build();
  EXPECT_EQ(rewrites(nn::apply_passes(g, {*be, Mode::kTrain}, nn::Fusion::kOn)), 1);
  EXPECT_EQ(count_kind(g, "feed_forward"), 1);
  EXPECT_EQ(count_kind(g, "gelu"), 1);
  EXPECT_EQ(count_kind(g, "linear"), 1);
  std::vector<float> grads[2];
  for (nn::Fusion fusion : {nn::Fusion::kOn, nn::Fusion::kOff}) {
    nn::TrainerConfig c;
    c.fusion = fusion;
    nn::Trainer net(build(), *be, c);
    data::SyntheticSource source(net.graph().input_specs(), 5);
    source.fill(*be, net.inputs());
    net.train_step();
    std::vector<float>& out = grads[fusion == nn::Fusion::kOn ? 0 : 1];
    out.resize(static_cast<std::size_t>(net.parameter_count()));
    be->to_host(net.flat_grads(), out.data());
  }
  testing::expect_close(grads[0], grads[1], "gradients");
}

struct Steps {
  std::vector<float> losses, weights, grads;
};

Steps train(nn::Fusion fusion) {
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& spec = models::find_model("bert-base");
  nn::TrainerConfig c;
  c.fusion = fusion;
  c.optimizer = spec.default_optimizer;
  c.optimizer.learning_rate = 1e-3f;
  nn::Trainer net(tiny_bert(Mode::kTrain), *be, c);
  EXPECT_EQ(count_kind(net.graph(), "feed_forward"), fusion == nn::Fusion::kOn ? kLayers : 0);
  data::SyntheticSource source(net.graph().input_specs(), 7);
  Steps s;
  for (int i = 0; i < 3; ++i) {
    source.fill(*be, net.inputs());
    net.train_step();
    s.losses.push_back(net.loss());
  }
  auto host = [&](const Tensor& t) {
    std::vector<float> out(static_cast<std::size_t>(t.numel()));
    be->to_host(t, out.data());
    return out;
  };
  s.weights = host(net.flat_weights());
  s.grads = host(net.flat_grads());
  return s;
}

using testing::expect_close;

// Three steps, so the gradients the fused backward writes (the GELU input's, over h, and from it
// the inner linear's) have moved the weights, and through them the next steps' losses.
TEST(FuseFeedForwardTest, FusedBertTrainsAsTheReference) {
  const Steps fused = train(nn::Fusion::kOn), reference = train(nn::Fusion::kOff);
  expect_close(fused.losses, reference.losses, "loss");
  expect_close(fused.grads, reference.grads, "gradients");
  expect_close(fused.weights, reference.weights, "weights");
}

// Inference: the encoder's output of one synthetic batch.
std::vector<float> infer(nn::Fusion fusion) {
  auto be = backend::make_backend(Device::cpu());
  nn::TrainerConfig c;
  c.fusion = fusion;
  c.mode = Mode::kInfer;
  nn::Trainer net(tiny_bert(Mode::kInfer), *be, c);
  EXPECT_EQ(count_kind(net.graph(), "feed_forward"), fusion == nn::Fusion::kOn ? kLayers : 0);
  data::SyntheticSource source(net.graph().input_specs(), 7);
  source.fill(*be, net.inputs());
  net.infer_step();
  std::vector<float> out(static_cast<std::size_t>(net.logits().numel()));
  be->to_host(net.logits(), out.data());
  return out;
}

TEST(FuseFeedForwardTest, FusedBertInfersAsTheReference) {
  expect_close(infer(nn::Fusion::kOn), infer(nn::Fusion::kOff), "output");
}

}  // namespace
}  // namespace dlbench
