// GNMT v2 (Wu et al. 2016, as NVIDIA's DeepLearningExamples and MLPerf's rnn_translator train it
// on WMT16 en-de), so a peer of the same parameter count is built from the same parts:
//
//   embeddings   one token table (32,320 x 1024: a joined BPE vocabulary padded to a multiple of
//                8) for source and target, dropout 0.2
//   encoder      layer 0 bidirectional (an LSTM left to right beside one over each sentence
//                reversed within its length, reversed back: 2048 wide), layer 1 from 2048 to
//                1024, layers 2 and 3 with a residual: x = LSTM(dropout(x)) + x
//   decoder      layer 0 an LSTM over the target's embeddings; its output queries the normalized
//                Bahdanau attention over the encoder's outputs (keys projected without a bias,
//                queries with one, masked by the source lengths); layers 1-3 read
//                dropout([x | context]), layers 2 and 3 with a residual
//   output       a linear layer to the vocabulary, with a bias; cross-entropy with label
//                smoothing 0.1 over the target's tokens (padding left out)
//
// Everything is time-major, as cuDNN's and oneDNN's LSTMs read it: row t * batch + n is sentence
// n's position t, the data laid out so (data::Distribution::time_major). Teacher-forced training
// runs each decoder layer over the whole target at once: the context depends on layer 0 alone.
// Adam, gradients clipped at global norm 5, as the reference. Weights start from U(-0.1, 0.1) (the
// LSTMs, the token table, v), the linear layers from a normal of the same variance; the
// reference's recurrent biases start at 0, ours with the rest of the LSTM's flat weights.
// Inference scores the given target (teacher forcing, no dropout); greedy and beam decoding are
// not built yet.
#include <memory>
#include <string>

#include "engine/data/input_spec.h"
#include "engine/data/translation_source.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/additive_attention.h"
#include "engine/nn/layers/dropout.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/lstm.h"
#include "engine/nn/layers/reverse_sequences.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kVocabulary = 32320;
constexpr std::int64_t kWidth = 1024;
constexpr int kLayers = 4;  // of the encoder and of the decoder
constexpr float kDropout = 0.2f;
constexpr float kLabelSmoothing = 0.1f;
constexpr float kInitBound = 0.1f;
constexpr float kMaxGradNorm = 5.0f;
// A normal's deviation of U(-0.1, 0.1)'s variance, for the linear layers (the work is the same).
constexpr float kLinearStddev = 0.0577350269f;

using data::TranslationField;

class GnmtBuilder {
 public:
  explicit GnmtBuilder(const ModelConfig& config)
      : g_(config.compute),
        net_(g_),
        config_(config),
        train_(config.mode == Mode::kTrain),
        batch_(config.batch),
        steps_(config.size),
        width_(kWidth / config.width_divisor) {
    DLBENCH_CHECK(width_ >= 1, "gnmt: width divisor " + std::to_string(config.width_divisor) +
                                   " leaves no width");
  }

  nn::Graph build() {
    const ValueId source_ids = input(TranslationField::kSourceIds, tokens(), "source token ids");
    const ValueId source_lengths =
        input(TranslationField::kSourceLengths, batch_, "source sentence lengths");
    const ValueId target_ids =
        input(TranslationField::kTargetIds, tokens(), "target token ids, [BOS] first");
    nn::ParamDecl table{
        "table", {kVocabulary, width_}, nn::Init::kUniform, 1, nn::ParamGroup::kSparseRows};
    table.bound = kInitBound;
    const nn::ParamId token_table = g_.add_parameter("embeddings.tokens.table", table);

    const ValueId memory =
        encoder(embed("encoder.embeddings", source_ids, token_table), source_lengths);
    const ValueId x =
        decoder(embed("decoder.embeddings", target_ids, token_table), memory, source_lengths);
    backend::MatmulParams output;
    output.m = tokens(), output.k = width_, output.n = kVocabulary, output.bias = true;
    const ValueId logits =
        g_.add("classifier", std::make_unique<nn::Linear>(output, kLinearStddev), {x});
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
  std::int64_t tokens() const { return steps_ * batch_; }

  ValueId input(TranslationField field, std::int64_t count, const char* meaning) {
    return g_.add_input({data::to_string(field),
                         {count},
                         DType::kI32,
                         data::translation(field, kVocabulary, steps_, /*time_major=*/true),
                         meaning});
  }

  ValueId embed(const std::string& name, ValueId ids, nn::ParamId table) {
    const ValueId looked_up =
        g_.add(name + ".tokens",
               std::make_unique<nn::Embedding>(nn::EmbeddingShape{tokens(), kVocabulary, width_},
                                               config_.compute, kLinearStddev),
               {ids}, {table});
    return dropout(name + ".dropout", looked_up);
  }

  // Training only (inference builds none); a seed per site.
  ValueId dropout(const std::string& name, ValueId x) {
    if (!train_) return x;
    return g_.add(name, std::make_unique<nn::Dropout>(kDropout, config_.seed + ++dropout_sites_),
                  {x});
  }

  ValueId lstm(const std::string& name, ValueId x) {
    backend::LstmParams p;
    p.batch = batch_, p.steps = steps_, p.input = net_.shape(x)[1], p.hidden = width_;
    return g_.add(
        name, std::make_unique<nn::Lstm>(p, config_.mode, nn::LstmStates::kFromZeros, kInitBound),
        {x});
  }

  ValueId reversed(const std::string& name, ValueId x, ValueId lengths) {
    return g_.add(name,
                  std::make_unique<nn::ReverseSequences>(backend::SequenceParams{steps_, batch_}),
                  {x, lengths});
  }

  ValueId encoder(ValueId x, ValueId lengths) {
    // Layer 0: the right-to-left direction reads each sentence from its last word.
    const ValueId forward = lstm("encoder.layer0.forward", x);
    const ValueId backward = reversed(
        "encoder.layer0.backward.unreverse",
        lstm("encoder.layer0.backward", reversed("encoder.layer0.backward.reverse", x, lengths)),
        lengths);
    x = net_.concat("encoder.layer0.concat", {forward, backward});
    x = lstm("encoder.layer1", dropout("encoder.layer1.dropout", x));
    for (int i = 2; i < kLayers; ++i) {
      const std::string name = "encoder.layer" + std::to_string(i);
      x = net_.add(name + ".residual", lstm(name, dropout(name + ".dropout", x)), x);
    }
    return x;
  }

  ValueId decoder(ValueId x, ValueId memory, ValueId source_lengths) {
    const ValueId query = lstm("decoder.layer0", x);
    const ValueId context = attention("decoder.attention", query, memory, source_lengths);
    x = query;
    for (int i = 1; i < kLayers; ++i) {
      const std::string name = "decoder.layer" + std::to_string(i);
      const ValueId in = dropout(name + ".dropout", net_.concat(name + ".concat", {x, context}));
      const ValueId out = lstm(name, in);
      x = i == 1 ? out : net_.add(name + ".residual", out, x);
    }
    return x;
  }

  ValueId attention(const std::string& name, ValueId query, ValueId memory, ValueId lengths) {
    backend::AdditiveAttentionParams p;
    p.batch = batch_, p.queries = p.keys = steps_, p.width = width_, p.value_width = width_;
    backend::MatmulParams keys;
    keys.m = tokens(), keys.k = width_, keys.n = width_, keys.bias = false;
    const ValueId k =
        g_.add(name + ".key", std::make_unique<nn::Linear>(keys, kLinearStddev), {memory});
    const ValueId q = net_.linear(name + ".query", query, width_, kLinearStddev);
    return g_.add(name, std::make_unique<nn::AdditiveAttention>(p), {q, k, memory, lengths});
  }

  nn::Graph g_;
  Builder net_;
  const ModelConfig& config_;
  bool train_;
  std::int64_t batch_, steps_, width_;
  std::uint64_t dropout_sites_ = 0;
};

ModelSpec spec() {
  ModelSpec s;
  s.name = "gnmt";
  s.description =
      "GNMT v2 translation (4 + 4 LSTM layers of 1024, the first bidirectional, normalized "
      "Bahdanau attention), shared vocabulary 32,320, label-smoothed loss";
  s.unit = SampleUnit::kPairs;  // sentence pairs
  s.default_train_batch = 128;  // the published setup
  s.default_infer_batch = 128;
  s.size = {"sentence length", "tokens", 50, {50, 16, 32, 64, 128}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdam;
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kAdam;
  s.default_optimizer.learning_rate = 2e-3f;  // the reference's; a run's --lr replaces it
  s.default_optimizer.max_grad_norm = kMaxGradNorm;
  s.read_data = data::read_translation_data;
  s.data_format =
      "sentence pairs of token ids (per line the source sentence's BPE ids separated by spaces, "
      "a tab, the target sentence's)";
  s.build = [](const ModelConfig& config) { return GnmtBuilder(config).build(); };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
