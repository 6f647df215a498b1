// The Transformer (Vaswani et al., 2017) in its "big" configuration, as fairseq's
// transformer_vaswani_wmt_en_de_big trains it on WMT en-de, so a peer of the same parameter count
// is built from the same parts:
//
//   embeddings   one token table (32,000 x 1024, a joined BPE vocabulary) for source and target,
//                scaled by sqrt(1024), plus sinusoidal positions, dropout
//   6 encoder    q, k, v projections, attention over the source lengths, output projection,
//   layers       dropout, residual, layer norm; feed-forward 1024 -> 4096 -> 1024 with ReLU,
//                dropout, residual, layer norm (post-LN, as the paper)
//   6 decoder    causal self-attention over the target lengths, then cross-attention (queries of
//   layers       the decoder over the encoder's output, keys over the source lengths), then the
//                feed-forward, each with dropout, residual and layer norm
//   output       logits over the vocabulary from the token table itself (tied, no bias);
//                cross-entropy with label smoothing 0.1 over the target's tokens (padding left
//                out)
//
// Dropout is the big en-de model's 0.3, on the embeddings and each sublayer's output; there is no
// attention-probability dropout (fairseq's default for this model). Adam with betas (0.9, 0.98)
// and epsilon 1e-9, as the paper. Weights start N(0, 0.02) (fairseq draws Xavier-uniform: the
// work is the same), the table N(0, 1024^-1/2). Inference scores the given target (teacher
// forcing, no dropout): the decoder's logits, without a search.
//
// A sample is one sentence pair, source and target each padded to the model's size (64 tokens
// by default); the data source counts the tokens that are not padding, which tokens/s quotes.
// Data: synthetic sentence pairs (engine/data/translation_batch.h), or a parallel corpus of
// token ids (engine/data/translation_source.h).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/input_spec.h"
#include "engine/data/translation_source.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/attention.h"
#include "engine/nn/layers/dropout.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/layer_norm.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/positional_encoding.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kVocabulary = 32000;  // a joined source-target BPE vocabulary
constexpr std::int64_t kWidth = 1024;
constexpr std::int64_t kHeads = 16;
constexpr std::int64_t kFeedForward = 4096;
constexpr int kEncoderLayers = 6, kDecoderLayers = 6;
constexpr float kDropout = 0.3f;
constexpr float kLabelSmoothing = 0.1f;
constexpr float kNormEpsilon = 1e-5f;  // torch's and fairseq's LayerNorm
constexpr float kInitStddev = 0.02f;

using data::TranslationField;

class TransformerBuilder {
 public:
  explicit TransformerBuilder(const ModelConfig& config)
      : g_(config.compute),
        net_(g_),
        config_(config),
        train_(config.mode == Mode::kTrain),
        batch_(config.batch),
        sequence_(config.size),
        width_(kWidth / config.width_divisor),
        feed_forward_(kFeedForward / config.width_divisor) {
    // Heads of an even width: the positional encoding pairs its columns (sines, then cosines).
    DLBENCH_CHECK(width_ % kHeads == 0 && width_ / kHeads % 2 == 0,
                  "transformer: width divisor " + std::to_string(config.width_divisor) +
                      " leaves no whole, even head width");
  }

  nn::Graph build() {
    const ValueId source_ids = input(TranslationField::kSourceIds, tokens(), "source token ids");
    const ValueId source_lengths =
        input(TranslationField::kSourceLengths, batch_, "source sentence lengths");
    const ValueId target_ids =
        input(TranslationField::kTargetIds, tokens(), "target token ids, [BOS] first");
    const ValueId target_lengths =
        input(TranslationField::kTargetLengths, batch_, "target sentence lengths");
    nn::ParamDecl table{
        "table", {kVocabulary, width_}, nn::Init::kNormal, 1, nn::ParamGroup::kSparseRows};
    table.stddev = static_cast<float>(1.0 / std::sqrt(static_cast<double>(width_)));
    table_stddev_ = table.stddev;
    const nn::ParamId token_table = g_.add_parameter("embeddings.tokens.table", table);

    ValueId memory = embed("encoder.embeddings", source_ids, token_table);
    for (int i = 0; i < kEncoderLayers; ++i) {
      const std::string name = "encoder.layer" + std::to_string(i);
      memory =
          sublayer(name + ".self_attention", memory,
                   attention(name + ".self_attention", memory, memory, {source_lengths}, false));
      memory =
          sublayer(name + ".feed_forward", memory, feed_forward(name + ".feed_forward", memory));
    }
    ValueId x = embed("decoder.embeddings", target_ids, token_table);
    for (int i = 0; i < kDecoderLayers; ++i) {
      const std::string name = "decoder.layer" + std::to_string(i);
      x = sublayer(name + ".self_attention", x,
                   attention(name + ".self_attention", x, x, {target_lengths}, true));
      x = sublayer(
          name + ".cross_attention", x,
          attention(name + ".cross_attention", x, memory, {target_lengths, source_lengths}, false));
      x = sublayer(name + ".feed_forward", x, feed_forward(name + ".feed_forward", x));
    }
    backend::MatmulParams output;
    output.m = tokens(), output.k = width_, output.n = kVocabulary, output.bias = false;
    const ValueId logits =
        g_.add("output", std::make_unique<nn::Linear>(output), {x}, {token_table});
    g_.mark_output(logits);
    if (train_) {
      backend::CrossEntropyParams loss;
      loss.label_smoothing = kLabelSmoothing;
      g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(loss),
             {logits, input(TranslationField::kTargetLabels, tokens(),
                            "target tokens to predict (-100: padding)")});
    }
    return std::move(g_);
  }

 private:
  std::int64_t tokens() const { return batch_ * sequence_; }

  ValueId input(TranslationField field, std::int64_t count, const char* meaning) {
    return g_.add_input({data::to_string(field),
                         {count},
                         DType::kI32,
                         data::translation(field, kVocabulary, sequence_),
                         meaning});
  }

  ValueId embed(const std::string& name, ValueId ids, nn::ParamId table) {
    const ValueId looked_up =
        g_.add(name + ".tokens",
               std::make_unique<nn::Embedding>(nn::EmbeddingShape{tokens(), kVocabulary, width_},
                                               config_.compute, table_stddev_),
               {ids}, {table});
    const auto scale = static_cast<float>(std::sqrt(static_cast<double>(width_)));
    return dropout(name + ".dropout",
                   g_.add(name + ".positions",
                          std::make_unique<nn::PositionalEncoding>(sequence_, scale), {looked_up}));
  }

  ValueId linear(const std::string& name, ValueId x, std::int64_t out) {
    return net_.linear(name, x, out, kInitStddev);
  }

  // Training only (inference builds none, as eval() turns them off); a seed per site.
  ValueId dropout(const std::string& name, ValueId x) {
    if (!train_) return x;
    return g_.add(name, std::make_unique<nn::Dropout>(kDropout, config_.seed + ++dropout_sites_),
                  {x});
  }

  // Queries from x, keys and values from `over` (x itself in self-attention), the heads mixed by
  // the output projection. `lengths`: one for queries and keys alike (self-attention), or the
  // queries' then the keys' (cross-attention).
  ValueId attention(const std::string& name, ValueId x, ValueId over,
                    const std::vector<ValueId>& lengths, bool causal) {
    backend::AttentionParams p;
    p.batch = batch_, p.heads = kHeads, p.seq_q = p.seq_kv = sequence_;
    p.head_dim = width_ / kHeads;
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
    p.causal = causal;
    std::vector<ValueId> inputs = {linear(name + ".query", x, width_),
                                   linear(name + ".key", over, width_),
                                   linear(name + ".value", over, width_)};
    inputs.insert(inputs.end(), lengths.begin(), lengths.end());
    const auto which =
        lengths.size() == 1 ? nn::AttentionLengths::kShared : nn::AttentionLengths::kSeparate;
    const ValueId attended = g_.add(name, std::make_unique<nn::Attention>(p, which), inputs);
    return linear(name + ".output", attended, width_);
  }

  ValueId feed_forward(const std::string& name, ValueId x) {
    const ValueId inner = g_.add(name + ".relu", std::make_unique<nn::Relu>(),
                                 {linear(name + ".inner", x, feed_forward_)});
    return linear(name + ".output", inner, width_);
  }

  // Post-LN: norm(x + dropout(f(x))).
  ValueId sublayer(const std::string& name, ValueId x, ValueId f) {
    const ValueId sum =
        g_.add(name + ".residual", std::make_unique<nn::Add>(), {x, dropout(name + ".dropout", f)});
    return g_.add(name + ".norm", std::make_unique<nn::LayerNorm>(net_.shape(sum), kNormEpsilon),
                  {sum});
  }

  nn::Graph g_;
  Builder net_;
  const ModelConfig& config_;
  bool train_;
  std::int64_t batch_, sequence_, width_, feed_forward_;
  float table_stddev_ = 0.0f;
  std::uint64_t dropout_sites_ = 0;
};

ModelSpec spec() {
  ModelSpec s;
  s.name = "transformer";
  s.description =
      "Transformer-big translation (6 + 6 layers, width 1024, 16 heads, feed-forward 4096), "
      "shared vocabulary 32,000, label-smoothed loss";
  s.unit = SampleUnit::kPairs;  // sentence pairs
  // Sentence pairs: fairseq's --max-tokens 3584 per GPU is about 120 pairs of ~28 tokens, and
  // GNMT's published setup takes 128.
  s.default_train_batch = 128;
  s.default_infer_batch = 128;
  s.size = {"sentence length", "tokens", 64, {64, 32, 128, 256}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdam;
  // The token table is also the output projection's weight, whose gradient reaches every row.
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kAdam;
  s.default_optimizer.beta2 = 0.98f;
  s.default_optimizer.epsilon = 1e-9f;
  s.read_data = data::read_translation_data;
  s.data_format =
      "sentence pairs of token ids (per line the source sentence's BPE ids separated by spaces, "
      "a tab, the target sentence's)";
  s.build = [](const ModelConfig& config) { return TransformerBuilder(config).build(); };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
