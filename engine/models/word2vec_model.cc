// Word2Vec: skip-gram with negative sampling (Mikolov et al., 2013), as the published text8
// evaluations run it: an input and an output embedding table over a text8-sized vocabulary
// (71,290 words seen 5 times or more), dimension 128; each (word, context) pair is scored
// against its context and k words (5 here) drawn from the unigram^0.75 distribution on the device
// (CandidateSampler), a logistic loss on each; lazy Adam on the touched rows of both tables
// (the reference C code runs plain SGD with a decaying rate: the same rows, another update).
//
// Training takes a batch of B (word, context) pairs and scores B (1 + k) candidates;
// inference scores the B pairs it is given. Data: synthetic pairs whose words and contexts are
// Zipf-distributed (exponent 1, as word frequencies are), the negatives' distribution built from
// the same frequencies; or a text file (CorpusData: its vocabulary sizes the tables, its counts
// the negatives' distribution, its windows the pairs).
//
// Two variants beside it, registered as models of their own so that the store, the reports,
// the suites and the peers tell them apart by name: word2vec-d300 (dimension 300, as the
// published Google News vectors) and word2vec-neg64 (64 negatives per pair, as sampled-softmax
// setups draw).
#include <cmath>
#include <memory>
#include <vector>

#include "engine/data/corpus_source.h"
#include "engine/models/builder.h"
#include "engine/models/registry.h"
#include "engine/nn/layers/candidate_sampler.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/row_dots.h"
#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"

namespace dlbench::models {
namespace {

constexpr std::int64_t kVocabulary = 71290;  // text8, words seen at least 5 times
constexpr double kWordSkew = 1.0;            // Zipf's law of word frequencies
constexpr double kNegativePower = 0.75;      // the reference's unigram^0.75

struct Variant {
  const char* name;
  std::int64_t dimension;
  int negatives;
  const char* description;
};

constexpr Variant kVariants[] = {
    {"word2vec", 128, 5,
     "Word2Vec skip-gram, negative sampling (5), dimension 128, vocabulary of text8's size or of "
     "the text read"},
    {"word2vec-d300", 300, 5,
     "Word2Vec skip-gram, negative sampling (5), dimension 300, vocabulary of text8's size or of "
     "the text read"},
    {"word2vec-neg64", 128, 64,
     "Word2Vec skip-gram, negative sampling (64), dimension 128, vocabulary of text8's size or of "
     "the text read"},
};

nn::Graph build(const Variant& v, const ModelConfig& config) {
  const std::int64_t b = config.batch;
  const auto* text = dynamic_cast<const data::CorpusData*>(config.data.get());
  DLBENCH_CHECK(config.data == nullptr || text != nullptr, "word2vec reads a text corpus only");
  const std::int64_t vocabulary =
      text ? static_cast<std::int64_t>(text->corpus().vocabulary.size()) : kVocabulary;
  const bool train = config.mode == Mode::kTrain;
  const std::int64_t candidates = train ? 1 + v.negatives : 1;
  nn::Graph g(config.compute);
  const ValueId words = g.add_input(
      {"words", {b}, DType::kI32, data::zipf(0, vocabulary, kWordSkew), "center word ids"});
  ValueId contexts = g.add_input(
      {"contexts", {b}, DType::kI32, data::zipf(0, vocabulary, kWordSkew), "context word ids"});
  ValueId labels = -1;
  if (train) {
    // Each word's frequency (the text's count, or rank r's under the synthetic data's Zipf law),
    // to the power the reference uses.
    std::vector<double> weights(static_cast<std::size_t>(vocabulary));
    for (std::int64_t r = 0; r < vocabulary; ++r)
      weights[static_cast<std::size_t>(r)] =
          text ? std::pow(static_cast<double>(text->corpus().counts[static_cast<std::size_t>(r)]),
                          kNegativePower)
               : std::pow(1.0 / static_cast<double>(r + 1), kWordSkew * kNegativePower);
    const std::vector<ValueId> sampled = g.add_multi(
        "negatives", std::make_unique<nn::CandidateSampler>(weights, v.negatives, config.seed),
        {contexts});
    contexts = sampled[0], labels = sampled[1];
  }
  // As the reference: input vectors uniform in +-0.5/D (here normal with that spread's
  // standard deviation), output vectors 0.
  const float input_stddev = 0.5f / v.dimension / std::sqrt(3.0f);
  const ValueId in =
      g.add("input",
            std::make_unique<nn::Embedding>(nn::EmbeddingShape{b, vocabulary, v.dimension},
                                            config.compute, input_stddev),
            {words});
  const ValueId out =
      g.add("output",
            std::make_unique<nn::Embedding>(
                nn::EmbeddingShape{b * candidates, vocabulary, v.dimension}, config.compute, 0.0f),
            {contexts});
  const ValueId logits =
      g.add("scores", std::make_unique<nn::RowDots>(b, candidates, v.dimension), {in, out});
  if (train) g.add("loss", std::make_unique<nn::SigmoidBinaryCrossEntropy>(), {logits, labels});
  g.mark_output(logits);
  return g;
}

template <int kIndex>
ModelSpec spec() {
  const Variant& v = kVariants[kIndex];
  ModelSpec s;
  s.name = v.name;
  s.description = v.description;
  s.unit = SampleUnit::kPairs;
  s.default_train_batch = 256;  // the published evaluation's
  s.default_infer_batch = 256;
  s.size = {"input size", "", 0, {}};
  s.default_optimizer.kind = nn::OptimizerConfig::Kind::kAdam;
  s.default_optimizer.sparse_kind = nn::OptimizerConfig::Kind::kSparseAdam;
  s.read_data = data::read_corpus_data;
  s.data_format = "plain text (text8, or any text: words are runs of letters)";
  s.word_vectors = "input.table";
  s.build = [&v](const ModelConfig& config) { return build(v, config); };
  return s;
}

}  // namespace

DLBENCH_REGISTER_MODEL(spec<0>);
DLBENCH_REGISTER_MODEL(spec<1>);
DLBENCH_REGISTER_MODEL(spec<2>);

}  // namespace dlbench::models
