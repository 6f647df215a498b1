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
// Inference translates: decoding's encoder graph runs once over the sources, then its step graph
// once per output position (nn::SequenceDecoder), each decoder LSTM's states carried; `build` with
// Mode::kInfer scores a given target instead (teacher forcing, no dropout). Decoding is greedy, or
// a beam search (build_decoding's beam) with the reference's length and coverage penalties.
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

  // Training, or scoring a given target (teacher forcing): every layer over whole sentences.
  nn::Graph build() {
    const ValueId source_ids = input(TranslationField::kSourceIds, tokens(), "source token ids");
    const ValueId source_lengths =
        input(TranslationField::kSourceLengths, batch_, "source sentence lengths");
    const ValueId target_ids =
        input(TranslationField::kTargetIds, tokens(), "target token ids, [BOS] first");
    const nn::ParamId table = token_table();
    const ValueId memory =
        encoder(embed("encoder.embeddings", source_ids, table, tokens()), source_lengths);
    // One statement each, so the nodes' order does not rest on the order arguments are evaluated.
    const ValueId target = embed("decoder.embeddings", target_ids, table, tokens());
    const ValueId k = keys(memory);
    const ValueId x = decoder(target, memory, k, source_lengths, steps_, nullptr);
    const ValueId logits = classifier(x, tokens());
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

  // Decoding's encoder: the sources' encoding and the attention's keys, once per batch.
  nn::Graph build_encoder() {
    const ValueId source_ids = input(TranslationField::kSourceIds, tokens(), "source token ids");
    const ValueId source_lengths =
        input(TranslationField::kSourceLengths, batch_, "source sentence lengths");
    const ValueId memory =
        encoder(embed("encoder.embeddings", source_ids, token_table(), tokens()), source_lengths);
    g_.mark_output(memory);
    g_.mark_output(keys(memory));
    return std::move(g_);
  }

  // Decoding's step: one output position of every row (a sentence, or one of its hypotheses),
  // its LSTMs' states carried; with `attention` the attention's probabilities are its last
  // output (beam search's coverage).
  nn::Graph build_step(bool attention) {
    const ValueId ids = g_.add_input({"tokens",
                                      {batch_},
                                      DType::kI32,
                                      data::uniform_int(0, kVocabulary),
                                      "the tokens chosen at the position before, [BOS] first"});
    const ValueId source_lengths =
        input(TranslationField::kSourceLengths, batch_, "source sentence lengths");
    const ValueId memory = carried_input("memory.0", tokens(), "the encoder's outputs");
    const ValueId k = carried_input("memory.1", tokens(), "the attention's keys");
    std::vector<ValueId> next_states;
    probs_wanted_ = attention;
    const ValueId previous = embed("decoder.embeddings", ids, token_table(), batch_);
    const ValueId x = decoder(previous, memory, k, source_lengths, 1, &next_states);
    g_.mark_output(classifier(x, batch_));
    for (ValueId state : next_states) g_.mark_output(state);
    if (attention) g_.mark_output(probs_);
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

  // A decoding step's input that the decoder fills (memory, states): [rows, width].
  ValueId carried_input(const std::string& name, std::int64_t rows, const char* meaning) {
    return g_.add_input({name, {rows, width_}, config_.compute, data::normal(0, 1), meaning});
  }

  nn::ParamId token_table() {
    nn::ParamDecl table{
        "table", {kVocabulary, width_}, nn::Init::kUniform, 1, nn::ParamGroup::kSparseRows};
    table.bound = kInitBound;
    return g_.add_parameter("embeddings.tokens.table", table);
  }

  ValueId embed(const std::string& name, ValueId ids, nn::ParamId table, std::int64_t rows) {
    const ValueId looked_up =
        g_.add(name + ".tokens",
               std::make_unique<nn::Embedding>(nn::EmbeddingShape{rows, kVocabulary, width_},
                                               config_.compute, kLinearStddev),
               {ids}, {table});
    return dropout(name + ".dropout", looked_up);
  }

  ValueId classifier(ValueId x, std::int64_t rows) {
    backend::MatmulParams output;
    output.m = rows, output.k = width_, output.n = kVocabulary, output.bias = true;
    return g_.add("classifier", std::make_unique<nn::Linear>(output, kLinearStddev), {x});
  }

  // Training only (inference builds none); a seed per site.
  ValueId dropout(const std::string& name, ValueId x) {
    if (!train_) return x;
    return g_.add(name, std::make_unique<nn::Dropout>(kDropout, config_.seed + ++dropout_sites_),
                  {x});
  }

  // An LSTM over `steps` positions from zero states, or (`next_states` given: decoding) one
  // whose states come in as "state.<i>" inputs and go out into next_states.
  ValueId lstm(const std::string& name, ValueId x, std::int64_t steps,
               std::vector<ValueId>* next_states = nullptr) {
    backend::LstmParams p;
    p.batch = batch_, p.steps = steps, p.input = net_.shape(x)[1], p.hidden = width_;
    if (next_states == nullptr)
      return g_.add(
          name, std::make_unique<nn::Lstm>(p, config_.mode, nn::LstmStates::kFromZeros, kInitBound),
          {x});
    const auto state = [&](std::size_t i) {
      return carried_input("state." + std::to_string(i), batch_,
                           "a decoder LSTM's state from the position before");
    };
    const ValueId h = state(next_states->size()), c = state(next_states->size() + 1);
    const std::vector<ValueId> out = g_.add_multi(
        name, std::make_unique<nn::Lstm>(p, config_.mode, nn::LstmStates::kCarried, kInitBound),
        {x, h, c});
    next_states->push_back(out[1]), next_states->push_back(out[2]);
    return out[0];
  }

  ValueId reversed(const std::string& name, ValueId x, ValueId lengths) {
    return g_.add(name,
                  std::make_unique<nn::ReverseSequences>(backend::SequenceParams{steps_, batch_}),
                  {x, lengths});
  }

  ValueId encoder(ValueId x, ValueId lengths) {
    // Layer 0: the right-to-left direction reads each sentence from its last word.
    const ValueId forward = lstm("encoder.layer0.forward", x, steps_);
    const ValueId backward =
        reversed("encoder.layer0.backward.unreverse",
                 lstm("encoder.layer0.backward",
                      reversed("encoder.layer0.backward.reverse", x, lengths), steps_),
                 lengths);
    x = net_.concat("encoder.layer0.concat", {forward, backward});
    x = lstm("encoder.layer1", dropout("encoder.layer1.dropout", x), steps_);
    for (int i = 2; i < kLayers; ++i) {
      const std::string name = "encoder.layer" + std::to_string(i);
      x = net_.add(name + ".residual", lstm(name, dropout(name + ".dropout", x), steps_), x);
    }
    return x;
  }

  // The attention's keys: the encoder's outputs projected, without a bias.
  ValueId keys(ValueId memory) {
    backend::MatmulParams keys;
    keys.m = tokens(), keys.k = width_, keys.n = width_, keys.bias = false;
    return g_.add("decoder.attention.key", std::make_unique<nn::Linear>(keys, kLinearStddev),
                  {memory});
  }

  // The decoder over `steps` positions of every sentence: the whole target, or one position
  // with its states carried (next_states given).
  ValueId decoder(ValueId x, ValueId memory, ValueId keys, ValueId source_lengths,
                  std::int64_t steps, std::vector<ValueId>* next_states) {
    const ValueId query = lstm("decoder.layer0", x, steps, next_states);
    const ValueId context =
        attention("decoder.attention", query, keys, memory, source_lengths, steps);
    x = query;
    for (int i = 1; i < kLayers; ++i) {
      const std::string name = "decoder.layer" + std::to_string(i);
      const ValueId in = dropout(name + ".dropout", net_.concat(name + ".concat", {x, context}));
      const ValueId out = lstm(name, in, steps, next_states);
      x = i == 1 ? out : net_.add(name + ".residual", out, x);
    }
    return x;
  }

  ValueId attention(const std::string& name, ValueId query, ValueId keys, ValueId memory,
                    ValueId lengths, std::int64_t queries) {
    backend::AdditiveAttentionParams p;
    p.batch = batch_, p.queries = queries, p.keys = steps_, p.width = width_,
    p.value_width = width_;
    const ValueId q = net_.linear(name + ".query", query, width_, kLinearStddev);
    if (!probs_wanted_)
      return g_.add(name, std::make_unique<nn::AdditiveAttention>(p), {q, keys, memory, lengths});
    const std::vector<ValueId> out =
        g_.add_multi(name, std::make_unique<nn::AdditiveAttention>(p, nn::AttentionProbs::kOutput),
                     {q, keys, memory, lengths});
    probs_ = out[1];
    return out[0];
  }

  nn::Graph g_;
  Builder net_;
  const ModelConfig& config_;
  bool train_;
  std::int64_t batch_, steps_, width_;
  std::uint64_t dropout_sites_ = 0;
  bool probs_wanted_ = false;  // the step graph gives the attention's probabilities out
  ValueId probs_ = -1;
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
  s.build_decoding = [](const ModelConfig& config, int beam) {
    ModelConfig infer = config;
    infer.mode = Mode::kInfer;
    ModelConfig rows = infer;  // the step runs a row per hypothesis
    rows.batch = infer.batch * beam;
    nn::DecodingGraphs graphs;
    graphs.encoder = GnmtBuilder(infer).build_encoder();
    graphs.step = GnmtBuilder(rows).build_step(beam > 1);
    // A translation as long as the sentences the model is built for (--input).
    graphs.max_length = infer.size;
    graphs.beam = beam;
    return graphs;
  };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec);

}  // namespace dlbench::models
