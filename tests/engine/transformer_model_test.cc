// The Transformer is the published big architecture (fairseq's transformer_vaswani_wmt_en_de_big
// with shared embeddings: the same parameter count, one token table for both embeddings and the
// output, the inputs a translation batch has), and a tiny one learns: the full 6 + 6 layers at
// 1/16 of the width memorize the target sentences of a batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"
#include "tests/engine/support/memorization.h"

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

// The masks and the wiring, by what the scores depend on (inference, the full depth at width 64,
// on the CPU): a target token moves the scores of its own and later positions only (causal
// self-attention), padding past the source's length moves nothing (its length masks the keys),
// and a source word moves its own sentence's scores but not another's (the decoder reads the
// encoder, and cross-attention keeps samples apart).
class TransformerWiringTest : public ::testing::Test {
 protected:
  static constexpr std::int64_t kBatch = 4, kSize = 32;

  void SetUp() override {
    const ModelSpec& spec = find_model("transformer");
    ModelConfig mc;
    mc.batch = kBatch, mc.size = kSize, mc.width_divisor = 16, mc.mode = Mode::kInfer;
    mc = resolve(spec, mc);
    nn::TrainerConfig tc;
    tc.mode = Mode::kInfer;
    net_ = std::make_unique<nn::Trainer>(spec.build(mc), *be_, tc);
    data::SyntheticSource source(net_->graph().input_specs(), 11);
    source.fill(*be_, net_->inputs());
    for (std::size_t k = 0; k < 4; ++k) {  // source ids and lengths, target ids and lengths
      inputs_[k].resize(static_cast<std::size_t>(net_->inputs()[k].numel()));
      be_->to_host(net_->inputs()[k], inputs_[k].data());
    }
    base_ = scores(inputs_);
  }

  std::vector<float> scores(const std::array<std::vector<std::int32_t>, 4>& inputs) {
    for (std::size_t k = 0; k < 4; ++k) be_->from_host(inputs[k].data(), net_->inputs()[k]);
    net_->infer_step();
    std::vector<float> out(static_cast<std::size_t>(net_->logits().numel()));
    be_->to_host(net_->logits(), out.data());
    return out;
  }

  // Whether row r (sample * kSize + position) of the scores differs from the base's.
  bool moved(const std::vector<float>& after, std::int64_t r) const {
    for (std::int64_t c = 0; c < kVocabulary; ++c) {
      const auto i = static_cast<std::size_t>(r * kVocabulary + c);
      if (std::abs(after[i] - base_[i]) > 1e-5f * (1.0f + std::abs(base_[i]))) return true;
    }
    return false;
  }

  // A sample whose source is padded and whose target has at least `words` tokens.
  std::int64_t padded_sample(std::int32_t words) const {
    for (std::int64_t n = 0; n < kBatch; ++n)
      if (inputs_[1][n] < kSize && inputs_[3][n] >= words) return n;
    ADD_FAILURE() << "no sample with a padded source and a target of " << words << " tokens";
    return 0;
  }

  std::unique_ptr<backend::Backend> be_ = backend::make_backend(Device::cpu());
  std::unique_ptr<nn::Trainer> net_;
  std::array<std::vector<std::int32_t>, 4> inputs_;
  std::vector<float> base_;
};

TEST_F(TransformerWiringTest, ATargetTokenMovesItsOwnAndLaterPositionsOnly) {
  const std::int64_t n = padded_sample(8), at = 5;
  auto changed = inputs_;
  changed[2][n * kSize + at] = changed[2][n * kSize + at] == 100 ? 101 : 100;
  const std::vector<float> after = scores(changed);
  for (std::int64_t j = 0; j < at; ++j) EXPECT_FALSE(moved(after, n * kSize + j)) << j;
  EXPECT_TRUE(moved(after, n * kSize + at));
  EXPECT_TRUE(moved(after, n * kSize + inputs_[3][n] - 1));
  for (std::int64_t m = 0; m < kBatch; ++m) {
    if (m == n) continue;
    for (std::int64_t j = 0; j < inputs_[3][m]; ++j)
      EXPECT_FALSE(moved(after, m * kSize + j)) << "sample " << m << " position " << j;
  }
}

// Padding past the source's length: the key mask hides it from every query. (Past the target's
// length the causal mask alone would hide it, so only the source side tests the lengths.)
TEST_F(TransformerWiringTest, SourcePaddingMovesNothing) {
  const std::int64_t n = padded_sample(3);
  auto changed = inputs_;
  changed[0][n * kSize + kSize - 1] = 100;
  const std::vector<float> after = scores(changed);
  for (std::int64_t j = 0; j < inputs_[3][n]; ++j) EXPECT_FALSE(moved(after, n * kSize + j)) << j;
}

TEST_F(TransformerWiringTest, ASourceWordMovesItsOwnSentencesScores) {
  const std::int64_t n = padded_sample(3);
  auto changed = inputs_;
  changed[0][n * kSize] = changed[0][n * kSize] == 100 ? 101 : 100;  // the first source word
  const std::vector<float> after = scores(changed);
  EXPECT_TRUE(moved(after, n * kSize));  // the decoder's first position sees only the source
  for (std::int64_t m = 0; m < kBatch; ++m) {
    if (m == n) continue;
    for (std::int64_t j = 0; j < inputs_[3][m]; ++j)
      EXPECT_FALSE(moved(after, m * kSize + j)) << "sample " << m << " position " << j;
  }
}

// The full depth at width 64 (16 heads of 4) on one synthetic batch of 2 sentence pairs of up to
// 32 tokens: the label-smoothed loss falls under a quarter of its first value (smoothing keeps it
// above 1.4), and the decoder then predicts three in four target tokens (teacher-forced) from their
// context, far more than the batch's most common token alone would give.
TEST(TransformerModelTest, ATinyTransformerMemorizesItsTargets) {
  auto be = backend::make_backend(Device::cpu());
  const std::unique_ptr<nn::Trainer> trainer =
      testing::tiny_trainer(*be, "transformer", 2, 32, 2e-3f);
  nn::Trainer& net = *trainer;
  const testing::LossDrop d = testing::train_until(net, 1.0f / 4, 300);
  EXPECT_NEAR(d.first, std::log(static_cast<float>(kVocabulary)), 1.5f);
  EXPECT_LT(d.last, d.first / 4) << "after " << d.steps << " steps";

  std::vector<std::int32_t> labels(2 * 32);
  be->to_host(net.inputs()[4], labels.data());  // target_labels
  std::vector<float> scores(static_cast<std::size_t>(net.logits().numel()));
  be->to_host(net.logits(), scores.data());
  const testing::TokenPredictions p = testing::token_predictions(labels, scores, kVocabulary);
  std::printf(
      "tiny transformer: loss %.3f -> %.3f in %d steps; %d of %d tokens right (one guess: %d)\n",
      d.first, d.last, d.steps, p.right, p.predicted, p.most_common);
  ASSERT_GT(p.predicted, 0);
  EXPECT_GT(p.right, 2 * p.most_common);
  EXPECT_GT(p.right, 3 * p.predicted / 4);
}

}  // namespace
}  // namespace dlbench::models
