// BERT is the published architecture (Hugging Face's BertForPreTraining: the same parameter
// count, the decoder tied to the token table, the inputs a pretraining batch has), and a tiny
// one learns: the full 12 layers at 1/16 of the width memorize the masked words of a batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/memorization.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kVocabulary = 30522;

nn::Graph build(const std::string& name, std::int64_t batch, int sequence, Mode mode,
                int width_divisor = 1) {
  const ModelSpec& m = find_model(name);
  ModelConfig c;
  c.batch = batch;
  c.size = sequence;
  c.mode = mode;
  c.width_divisor = width_divisor;
  return m.build(resolve(m, c));
}

// Counted by hand from the layout: embeddings (tokens, 512 positions, 2 segments, a layer
// norm), per layer four H x H projections and the feed-forward H -> 4H -> H with biases and two
// layer norms, the pooler; training adds the MLM transform and its norm, the decoder's bias (its
// weight is the token table) and the next-sentence classifier.
std::int64_t expected_parameters(std::int64_t layers, std::int64_t h, bool heads) {
  const std::int64_t embeddings = (kVocabulary + 512 + 2) * h + 2 * h;
  const std::int64_t layer = 4 * (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h;
  const std::int64_t pooler = h * h + h;
  const std::int64_t pretraining = (h * h + h) + 2 * h + kVocabulary + (2 * h + 2);
  return embeddings + layers * layer + pooler + (heads ? pretraining : 0);
}

TEST(BertModelTest, ParameterCountsAreHuggingFacesBertForPreTraining) {
  // Hugging Face transformers' BertForPreTraining and BertModel, counted on the GPU machine
  // (2026-11-29) against the same configurations.
  EXPECT_EQ(nn::parameter_count(build("bert-base", 1, 128, Mode::kTrain)), 110'106'428);
  EXPECT_EQ(nn::parameter_count(build("bert-base", 1, 128, Mode::kInfer)), 109'482'240);
  EXPECT_EQ(nn::parameter_count(build("bert-large", 1, 128, Mode::kTrain)), 336'226'108);
  EXPECT_EQ(nn::parameter_count(build("bert-large", 1, 512, Mode::kInfer)), 335'141'888);
  EXPECT_EQ(nn::parameter_count(build("bert-base", 1, 32, Mode::kTrain)),
            expected_parameters(12, 768, true));
  EXPECT_EQ(nn::parameter_count(build("bert-large", 1, 32, Mode::kInfer, 16)),
            expected_parameters(24, 64, false));
}

// Per token: 12 H^2 in the projections and the feed-forward of each layer, 2 s H in attention
// (scores and the weighted sum); the pooler's H^2 per sequence; in training the MLM transform's
// H^2 and the decoder's H V per token and the next-sentence classifier's 2 H per sequence.
TEST(BertModelTest, MacsFollowTheLayout) {
  const std::int64_t b = 2, s = 128, h = 768, layers = 12;
  const std::int64_t encoder = b * s * layers * (12 * h * h + 2 * s * h) + b * (h * h);
  EXPECT_EQ(nn::forward_macs(build("bert-base", b, s, Mode::kInfer)), encoder);
  EXPECT_EQ(nn::forward_macs(build("bert-base", b, s, Mode::kTrain)),
            encoder + b * s * (h * h + h * kVocabulary) + b * 2 * h);
}

TEST(BertModelTest, TakesAPretrainingBatchAndTiesTheDecoderToTheTokenTable) {
  const nn::Graph train = build("bert-base", 4, 64, Mode::kTrain);
  std::vector<std::string> names;
  for (const data::InputSpec& in : train.input_specs()) {
    names.push_back(in.name);
    EXPECT_EQ(in.dtype, DType::kI32) << in.name;
    EXPECT_EQ(in.values.kind, data::Distribution::Kind::kPretraining) << in.name;
    EXPECT_EQ(in.values.sequence, 64) << in.name;
    EXPECT_EQ(in.values.predictions, 10) << in.name;  // 20 at 128, 80 at 512
    const bool per_sequence = in.name == "lengths" || in.name == "next_sentence";
    EXPECT_EQ(in.shape, (Shape{per_sequence ? 4 : 4 * 64})) << in.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ids", "segments", "positions", "lengths",
                                             "masked_labels", "next_sentence"}));
  const auto table =
      std::find_if(train.params().begin(), train.params().end(),
                   [](const nn::ParamInfo& p) { return p.decl.shape[0] == kVocabulary; });
  ASSERT_NE(table, train.params().end());
  ASSERT_EQ(table->users.size(), 2u);
  EXPECT_EQ(train.nodes()[table->users[0]].name, "embeddings.tokens");
  EXPECT_EQ(train.nodes()[table->users[1]].name, "mlm.decoder");
  // Scores for every position over the vocabulary, and the next-sentence pair.
  EXPECT_EQ(train.value(train.outputs().at(0)).shape, (Shape{4 * 64, kVocabulary}));
  EXPECT_EQ(train.value(train.outputs().at(1)).shape, (Shape{4, 2}));

  // Inference: the encoder's rows and the pooled row, no labels and no dropout.
  const nn::Graph infer = build("bert-base", 4, 64, Mode::kInfer);
  EXPECT_EQ(infer.input_specs().size(), 4u);
  EXPECT_EQ(infer.value(infer.outputs().at(0)).shape, (Shape{4 * 64, 768}));
  EXPECT_EQ(infer.value(infer.outputs().at(1)).shape, (Shape{4, 768}));
  for (const nn::Node& n : infer.nodes()) EXPECT_STRNE(n.layer->kind(), "dropout") << n.name;

  const ModelSpec& spec = find_model("bert-large");
  EXPECT_EQ(spec.unit, SampleUnit::kSequences);
  EXPECT_EQ(spec.default_optimizer.kind, nn::OptimizerConfig::Kind::kAdamW);
  EXPECT_EQ(spec.tokens_per_sample(resolve(spec, ModelConfig{})), 128);
}

TEST(BertModelTest, AHeadWidthThatIsNotWholeIsRefused) {
  EXPECT_THROW(build("bert-base", 1, 32, Mode::kTrain, 7), Error);
}

// The full depth at hidden 48 (12 heads of 4) on one synthetic batch of 8 sequences of 32: the
// summed MLM and next-sentence loss falls under a third of its first value, and the masked
// words are then predicted better than the best single guess (the batch's most common masked
// word) could, so the scores depend on the context and not only on word frequency.
TEST(BertModelTest, ATinyBertMemorizesItsMaskedWords) {
  auto be = backend::make_backend(Device::cpu());
  const std::unique_ptr<nn::Trainer> trainer =
      testing::tiny_trainer(*be, "bert-base", 8, 32, 2e-3f);
  nn::Trainer& net = *trainer;
  const testing::LossDrop d = testing::train_until(net, 1.0f / 3, 150);
  EXPECT_NEAR(d.first, std::log(static_cast<float>(kVocabulary)) + std::log(2.0f), 1.5f);
  EXPECT_LT(d.last, d.first / 3) << "after " << d.steps << " steps";

  std::vector<std::int32_t> labels(8 * 32);
  be->to_host(net.inputs()[4], labels.data());  // masked_labels
  std::vector<float> scores(static_cast<std::size_t>(net.logits().numel()));
  be->to_host(net.logits(), scores.data());
  const testing::TokenPredictions p = testing::token_predictions(labels, scores, kVocabulary);
  std::printf(
      "tiny bert: loss %.3f -> %.3f in %d steps; %d of %d masked words right (one guess: %d)\n",
      d.first, d.last, d.steps, p.right, p.predicted, p.most_common);
  ASSERT_GT(p.predicted, 0);
  EXPECT_GT(p.right, 2 * p.most_common);
}

}  // namespace
}  // namespace dlbench::models
