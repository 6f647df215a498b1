// The Transformer is the published big architecture (fairseq's transformer_vaswani_wmt_en_de_big
// with shared embeddings: the same parameter count, one token table for both embeddings and the
// output, the inputs a translation batch has), and a tiny one learns: the full 6 + 6 layers at
// 1/16 of the width memorize the target sentences of a batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kVocabulary = 32000;

nn::Graph build(std::int64_t batch, int sequence, Mode mode, int width_divisor = 1) {
  const ModelSpec& m = find_model("transformer");
  ModelConfig c;
  c.batch = batch;
  c.size = sequence;
  c.mode = mode;
  c.width_divisor = width_divisor;
  return m.build(resolve(m, c));
}

// Counted by hand from the layout: the token table, per encoder layer four d x d projections
// with biases, the feed-forward d -> f -> d and two layer norms; per decoder layer eight
// projections (self and cross) and three layer norms. The output is the table itself.
std::int64_t expected_parameters(std::int64_t d, std::int64_t f) {
  const std::int64_t feed_forward = (d * f + f) + (f * d + d);
  const std::int64_t encoder = 4 * (d * d + d) + feed_forward + 2 * 2 * d;
  const std::int64_t decoder = 8 * (d * d + d) + feed_forward + 3 * 2 * d;
  return kVocabulary * d + 6 * encoder + 6 * decoder;
}

TEST(TransformerModelTest, ParameterCountIsTransformerBigsWithSharedEmbeddings) {
  EXPECT_EQ(expected_parameters(1024, 4096), 209'125'376);
  EXPECT_EQ(nn::parameter_count(build(1, 64, Mode::kTrain)), 209'125'376);
  EXPECT_EQ(nn::parameter_count(build(2, 32, Mode::kInfer)), 209'125'376);
  EXPECT_EQ(nn::parameter_count(build(1, 32, Mode::kTrain, 16)), expected_parameters(64, 256));
}

// Per token: the encoder's 4 d^2 + 2 d f, the decoder's 8 d^2 + 2 d f, each attention's 2 s d,
// and the output's d V.
TEST(TransformerModelTest, MacsFollowTheLayout) {
  const std::int64_t b = 2, s = 64, d = 1024, f = 4096;
  const std::int64_t tokens = b * s;
  const std::int64_t encoder = 6 * tokens * (4 * d * d + 2 * d * f + 2 * s * d);
  const std::int64_t decoder = 6 * tokens * (8 * d * d + 2 * d * f + 2 * 2 * s * d);
  EXPECT_EQ(nn::forward_macs(build(b, s, Mode::kTrain)),
            encoder + decoder + tokens * d * kVocabulary);
}

TEST(TransformerModelTest, TakesATranslationBatchAndTiesTheOutputToTheTokenTable) {
  const nn::Graph train = build(4, 32, Mode::kTrain);
  std::vector<std::string> names;
  for (const data::InputSpec& in : train.input_specs()) {
    names.push_back(in.name);
    EXPECT_EQ(in.dtype, DType::kI32) << in.name;
    EXPECT_EQ(in.values.kind, data::Distribution::Kind::kTranslation) << in.name;
    EXPECT_EQ(in.values.sequence, 32) << in.name;
    EXPECT_EQ(static_cast<std::int64_t>(in.values.b), kVocabulary) << in.name;
    const bool per_sentence = in.name.ends_with("_lengths");
    EXPECT_EQ(in.shape, (Shape{per_sentence ? 4 : 4 * 32})) << in.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"source_ids", "source_lengths", "target_ids",
                                             "target_lengths", "target_labels"}));
  const auto table =
      std::find_if(train.params().begin(), train.params().end(),
                   [](const nn::ParamInfo& p) { return p.decl.shape[0] == kVocabulary; });
  ASSERT_NE(table, train.params().end());
  ASSERT_EQ(table->users.size(), 3u);
  EXPECT_EQ(train.nodes()[table->users[0]].name, "encoder.embeddings.tokens");
  EXPECT_EQ(train.nodes()[table->users[1]].name, "decoder.embeddings.tokens");
  EXPECT_EQ(train.nodes()[table->users[2]].name, "output");
  EXPECT_EQ(train.value(train.outputs().at(0)).shape, (Shape{4 * 32, kVocabulary}));
  int causal = 0, attentions = 0;
  for (const nn::Node& n : train.nodes()) {
    if (std::string(n.layer->kind()) != "attention") continue;
    ++attentions;
    causal += n.name.find(".self_attention") != std::string::npos && n.name.starts_with("decoder.");
  }
  EXPECT_EQ(attentions, 18);
  EXPECT_EQ(causal, 6);

  // Inference scores the given target: no labels, no dropout.
  const nn::Graph infer = build(4, 32, Mode::kInfer);
  EXPECT_EQ(infer.input_specs().size(), 4u);
  for (const nn::Node& n : infer.nodes()) EXPECT_STRNE(n.layer->kind(), "dropout") << n.name;

  const ModelSpec& spec = find_model("transformer");
  EXPECT_EQ(spec.unit, SampleUnit::kPairs);
  EXPECT_EQ(spec.default_optimizer.kind, nn::OptimizerConfig::Kind::kAdam);
  EXPECT_FLOAT_EQ(spec.default_optimizer.beta2, 0.98f);
}

TEST(TransformerModelTest, AHeadWidthThatIsNotWholeIsRefused) {
  EXPECT_THROW(build(1, 32, Mode::kTrain, 3), Error);
}

// The full depth at width 64 (16 heads of 4) on one synthetic batch of 2 sentence pairs of up to
// 32 tokens: the label-smoothed loss falls under a quarter of its first value (smoothing keeps it
// above 1.4), and the decoder then predicts three in four target tokens (teacher-forced) from their
// context, far more than the batch's most common token alone would give.
TEST(TransformerModelTest, ATinyTransformerMemorizesItsTargets) {
  auto be = backend::make_backend(Device::cpu());
  const ModelSpec& spec = find_model("transformer");
  ModelConfig mc;
  mc.batch = 2, mc.size = 32, mc.width_divisor = 16, mc.seed = 3;
  mc = resolve(spec, mc);
  nn::TrainerConfig tc;
  tc.optimizer = spec.default_optimizer;
  tc.optimizer.learning_rate = 2e-3f;
  nn::Trainer net(spec.build(mc), *be, tc);
  data::SyntheticSource source(net.graph().input_specs(), 11);
  source.fill(*be, net.inputs());
  net.train_step();
  const float first = net.loss();
  EXPECT_NEAR(first, std::log(static_cast<float>(kVocabulary)), 1.5f);
  float loss = first;
  int step = 1;
  for (; step < 300 && loss > first / 4; ++step) {
    net.train_step();
    loss = net.loss();
    ASSERT_TRUE(std::isfinite(loss)) << "step " << step;
  }
  EXPECT_LT(loss, first / 4) << "after " << step << " steps";

  std::vector<std::int32_t> labels(2 * 32);
  be->to_host(net.inputs()[4], labels.data());  // target_labels
  const Tensor logits = net.logits();
  std::vector<float> scores(static_cast<std::size_t>(logits.numel()));
  be->to_host(logits, scores.data());
  int predicted = 0, right = 0;
  std::map<std::int32_t, int> counts;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (labels[r] < 0) continue;
    ++predicted, ++counts[labels[r]];
    const auto row = scores.begin() + static_cast<std::ptrdiff_t>(r * kVocabulary);
    right += std::max_element(row, row + kVocabulary) - row == labels[r];
  }
  int most_common = 0;
  for (const auto& [word, count] : counts) most_common = std::max(most_common, count);
  std::printf(
      "tiny transformer: loss %.3f -> %.3f in %d steps; %d of %d tokens right (one "
      "guess: %d)\n",
      first, loss, step, right, predicted, most_common);
  ASSERT_GT(predicted, 0);
  EXPECT_GT(right, 2 * most_common);
  EXPECT_GT(right, 3 * predicted / 4);
}

}  // namespace
}  // namespace dlbench::models
