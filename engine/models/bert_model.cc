// BERT (Devlin et al., 2019) pretraining, base and large, laid out as Hugging Face's
// BertForPreTraining so a peer of the same parameter count is built from the same parts:
//
//   embeddings   token (30,522 x H) + position (512 x H) + segment (2 x H), summed, layer norm,
//                dropout
//   L layers     q, k, v projections, attention over each sample's length, output projection,
//                dropout, residual, layer norm; feed-forward H -> 4H -> H with GELU (the tanh
//                form, as Google's BERT: cuBLASLt's epilogues compute that one), dropout,
//                residual, layer norm (post-LN, as the original)
//   pooler       the [CLS] row of each sample, H -> H, tanh
//   MLM head     H -> H, GELU, layer norm, then logits over the vocabulary for every position
//                from the token table itself (tied) plus a bias; cross-entropy over the masked
//                positions (the others' label is -100, ignored)
//   NSP head     pooled row -> 2 logits, cross-entropy against the next-sentence label
//
// The two losses are summed. Inference runs embeddings, encoder and pooler (BertModel), without
// dropout, as PyTorch's eval() does. Layer norms use BERT's eps 1e-12, weights start N(0, 0.02).
// Attention-probability dropout (BERT's 0.1 on the softmax) is not applied: the attention op
// has none yet, and the peer leaves it out too.
//
// Data: synthetic pretraining batches (engine/data/pretraining_batch.h), or sequences made from a
// tokenized corpus as create_pretraining_data.py makes them (engine/data/pretraining_source.h);
// max predictions per sequence scale with its length as NVIDIA's phases set them (20 at 128,
// 80 at 512).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "engine/data/pretraining_source.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/attention.h"
#include "engine/nn/layers/dropout.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/gelu.h"
#include "engine/nn/layers/layer_norm.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/select_position.h"
#include "engine/nn/layers/tanh.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {
namespace {

struct Variant {
  const char* name;
  const char* description;
  int layers;
  std::int64_t hidden, heads;
};

constexpr Variant kVariants[] = {
    {"bert-base",
     "BERT-base pretraining (12 layers, hidden 768, 12 heads), masked-LM and next-sentence "
     "heads, vocabulary 30,522",
     12, 768, 12},
    {"bert-large",
     "BERT-large pretraining (24 layers, hidden 1024, 16 heads), masked-LM and next-sentence "
     "heads, vocabulary 30,522",
     24, 1024, 16},
};

constexpr std::int64_t kVocabulary = 30522;  // bert-base-uncased's WordPiece vocabulary
constexpr std::int64_t kPositions = 512;     // the position table: the longest sequence
constexpr std::int64_t kSegments = 2;
constexpr float kInitStddev = 0.02f;  // BERT's initializer_range
constexpr float kDropout = 0.1f;

// 20 predictions at length 128 and 80 at 512 (NVIDIA's phase 1 and 2): 5/32 of the length.
std::int64_t max_predictions(std::int64_t sequence) {
  return std::max<std::int64_t>(1, sequence * 5 / 32);
}

class BertBuilder {
 public:
  BertBuilder(const Variant& v, const ModelConfig& config)
      : g_(config.compute),
        net_(g_),
        config_(config),
        train_(config.mode == Mode::kTrain),
        batch_(config.batch),
        sequence_(config.size),
        hidden_(v.hidden / config.width_divisor),
        heads_(v.heads) {
    DLBENCH_CHECK(hidden_ % heads_ == 0 && hidden_ > 0, std::string(v.name) + ": width divisor " +
                                                            std::to_string(config.width_divisor) +
                                                            " leaves no whole head width");
  }

  nn::Graph build(int layers) {
    const ValueId ids = input(data::PretrainingField::kIds, tokens(), "token ids");
    const ValueId segments = input(data::PretrainingField::kSegments, tokens(), "segment ids");
    const ValueId positions = input(data::PretrainingField::kPositions, tokens(), "positions");
    const ValueId lengths = input(data::PretrainingField::kLengths, batch_, "sequence lengths");
    // The token table is the MLM decoder's weight too: declared on the graph, given to both.
    nn::ParamDecl table{
        "table", {kVocabulary, hidden_}, nn::Init::kNormal, 1, nn::ParamGroup::kSparseRows};
    table.stddev = kInitStddev;
    const nn::ParamId token_table = g_.add_parameter("embeddings.tokens.table", table);

    ValueId x = g_.add("embeddings.tokens", embedding(kVocabulary), {ids}, {token_table});
    x = add("embeddings.add_positions", x,
            g_.add("embeddings.positions", embedding(kPositions), {positions}));
    x = add("embeddings.add_segments", x,
            g_.add("embeddings.segments", embedding(kSegments), {segments}));
    x = dropout("embeddings.dropout", layer_norm("embeddings.norm", x));
    for (int i = 0; i < layers; ++i) x = encoder_layer("layer" + std::to_string(i), x, lengths);
    const ValueId pooled = g_.add(
        "pooler.tanh", std::make_unique<nn::Tanh>(),
        {linear("pooler.dense",
                g_.add("pooler.first", std::make_unique<nn::SelectPosition>(sequence_, 0), {x}),
                hidden_)});
    if (!train_) {
      g_.mark_output(x);
      g_.mark_output(pooled);
      return std::move(g_);
    }
    pretraining_heads(x, pooled, token_table);
    return std::move(g_);
  }

 private:
  std::int64_t tokens() const { return batch_ * sequence_; }

  ValueId input(data::PretrainingField field, std::int64_t count, const char* meaning) {
    return g_.add_input(
        {data::to_string(field),
         {count},
         DType::kI32,
         data::pretraining(field, kVocabulary, sequence_, max_predictions(sequence_)),
         meaning});
  }

  std::unique_ptr<nn::Layer> embedding(std::int64_t rows) const {
    return std::make_unique<nn::Embedding>(nn::EmbeddingShape{tokens(), rows, hidden_},
                                           config_.compute, kInitStddev);
  }

  ValueId linear(const std::string& name, ValueId x, std::int64_t out) {
    return net_.linear(name, x, out, kInitStddev);
  }

  ValueId add(const std::string& name, ValueId a, ValueId b) {
    return g_.add(name, std::make_unique<nn::Add>(), {a, b});
  }

  ValueId layer_norm(const std::string& name, ValueId x) {
    return g_.add(name, std::make_unique<nn::LayerNorm>(net_.shape(x)), {x});
  }

  // Training only (inference builds none, as eval() turns them off); a seed per site.
  ValueId dropout(const std::string& name, ValueId x) {
    if (!train_) return x;
    return g_.add(name, std::make_unique<nn::Dropout>(kDropout, config_.seed + ++dropout_sites_),
                  {x});
  }

  ValueId encoder_layer(const std::string& name, ValueId x, ValueId lengths) {
    backend::AttentionParams p;
    p.batch = batch_, p.heads = heads_, p.seq_q = p.seq_kv = sequence_;
    p.head_dim = hidden_ / heads_;
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
    const ValueId attended = g_.add(
        name + ".attention", std::make_unique<nn::Attention>(p, nn::AttentionLengths::kShared),
        {linear(name + ".query", x, hidden_), linear(name + ".key", x, hidden_),
         linear(name + ".value", x, hidden_), lengths});
    const ValueId projected =
        dropout(name + ".attention.dropout", linear(name + ".attention.output", attended, hidden_));
    x = layer_norm(name + ".attention.norm", add(name + ".attention.residual", x, projected));
    const ValueId inner = g_.add(name + ".feed_forward.gelu", std::make_unique<nn::Gelu>(),
                                 {linear(name + ".feed_forward.inner", x, 4 * hidden_)});
    const ValueId out = dropout(name + ".feed_forward.dropout",
                                linear(name + ".feed_forward.output", inner, hidden_));
    return layer_norm(name + ".feed_forward.norm", add(name + ".feed_forward.residual", x, out));
  }

  void pretraining_heads(ValueId x, ValueId pooled, nn::ParamId token_table) {
    const ValueId transformed = layer_norm(
        "mlm.norm",
        g_.add("mlm.gelu", std::make_unique<nn::Gelu>(), {linear("mlm.transform", x, hidden_)}));
    backend::MatmulParams decoder;
    decoder.m = tokens(), decoder.k = hidden_, decoder.n = kVocabulary, decoder.bias = true;
    const nn::ParamId bias =
        g_.add_parameter("mlm.decoder.bias", {"bias", {kVocabulary}, nn::Init::kZeros});
    const ValueId word_logits = g_.add("mlm.decoder", std::make_unique<nn::Linear>(decoder),
                                       {transformed}, {token_table, bias});
    const ValueId nsp_logits = linear("nsp.classifier", pooled, 2);
    const ValueId masked = input(data::PretrainingField::kMaskedLabels, tokens(),
                                 "masked words (-100: not predicted)");
    const ValueId next = input(data::PretrainingField::kNextSentence, batch_,
                               "next-sentence labels (0: B follows A)");
    g_.add("mlm_loss", std::make_unique<nn::SoftmaxCrossEntropy>(backend::CrossEntropyParams{}),
           {word_logits, masked});
    g_.add("nsp_loss", std::make_unique<nn::SoftmaxCrossEntropy>(backend::CrossEntropyParams{}),
           {nsp_logits, next});
    g_.mark_output(word_logits);
    g_.mark_output(nsp_logits);
  }

  nn::Graph g_;
  Builder net_;
  const ModelConfig& config_;
  bool train_;
  std::int64_t batch_, sequence_, hidden_, heads_;
  std::uint64_t dropout_sites_ = 0;
};

template <int kIndex>
ModelSpec spec() {
  const Variant& v = kVariants[kIndex];
  ModelSpec s;
  s.name = v.name;
  s.description = v.description;
  s.unit = SampleUnit::kSequences;
  s.default_train_batch = 64;  // phase 1 per GPU
  s.default_infer_batch = 64;
  s.size = {"sequence length", "tokens", 128, {128, 512, 384, 256, 64, 32}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdamW;
  // The token table is also the decoder's weight, whose gradient reaches every row: dense.
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kAdamW;
  s.default_optimizer.weight_decay = 0.01f;
  s.read_data = data::read_pretraining_data;
  s.data_format =
      "token ids (one sentence per line as WordPiece ids separated by spaces, a blank line "
      "between documents)";
  s.tokens_per_sample = [](const ModelConfig& config) { return std::int64_t{config.size}; };
  s.build = [&v](const ModelConfig& config) { return BertBuilder(v, config).build(v.layers); };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec<0>);
DLBENCH_REGISTER_MODEL(spec<1>);

}  // namespace dlbench::models
