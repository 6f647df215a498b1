#include "bench/runner/translation_eval.h"

#include <algorithm>

#include "bench/runner/trainer_setup.h"
#include "engine/core/error.h"
#include "engine/data/dataset_helpers.h"
#include "engine/nn/sentence_translation.h"
#include "engine/nn/sequence_decoder.h"

namespace dlbench::runner {
namespace {

// The smallest sentence length the model takes of at least `needed`; 0 when none is.
int fitting_length(const models::ModelSpec& model, int needed) {
  int best = 0;
  for (int size : model.size.allowed)
    if (size >= needed && (best == 0 || size < best)) best = size;
  return best;
}

}  // namespace

void check_test_set(const data::SentencePairs& test, const std::vector<data::InputSpec>& inputs) {
  const data::Distribution& ids =
      inputs[data::int_input_index(inputs, "source_ids", "the test set")].values;
  const auto vocabulary = static_cast<std::int64_t>(ids.b);
  if (test.largest_id >= vocabulary)
    throw Error(ErrorKind::kUsage,
                test.path + " holds token id " + data::with_commas(test.largest_id) +
                    ", past the model's vocabulary of " + data::with_commas(vocabulary) + " ids",
                "the test set must be segmented with the training data's BPE vocabulary");
}

std::optional<TranslationQuality> evaluate_translation(
    const models::ModelSpec& model, const models::ModelConfig& trained_config,
    const result::RunConfig& config, const nn::Trainer& trained, backend::Backend& be,
    const data::SentencePairs& test, const nn::TranslatedBatches& progress) {
  TranslationQuality q;
  q.beam = config.beam;
  const int longest_length =
      model.size.allowed.empty()
          ? trained_config.size
          : *std::max_element(model.size.allowed.begin(), model.size.allowed.end());
  // The sources that fit the longest length, with their references.
  data::TokenSentences sources;
  std::vector<std::int64_t> kept;
  std::size_t longest = 0;
  for (std::int64_t p = 0; p < test.count(); ++p) {
    const std::span<const std::int32_t> s = test.source.sentence(p);
    if (static_cast<std::int64_t>(s.size()) + 1 > longest_length) {
      ++q.left_out;
      continue;
    }
    longest = std::max(longest, s.size());
    sources.add(s);
    kept.push_back(p);
  }
  if (kept.empty()) return q;  // nothing to translate: no score

  models::ModelConfig mc = trained_config;
  mc.mode = Mode::kInfer;
  mc.batch = std::min(trained_config.batch, static_cast<std::int64_t>(kept.size()));
  const int needed = std::max(trained_config.size, static_cast<int>(longest) + 1);
  mc.size = model.size.allowed.empty() ? trained_config.size : fitting_length(model, needed);
  q.sentence_length = mc.size;
  nn::TrainerConfig tc = trainer_config(model, config, nullptr);
  tc.mode = Mode::kInfer;
  nn::DecodingGraphs graphs = model.build_decoding(mc, config.beam);
  graphs.max_length = std::max(graphs.max_length, kTestTranslationLength);
  nn::SequenceDecoder decoder(std::move(graphs), be, tc);
  decoder.load_weights(trained);
  const std::optional<data::TokenSentences> translations =
      nn::translate_sentences(decoder, be, sources, progress);
  if (!translations) return std::nullopt;

  for (std::size_t i = 0; i < kept.size(); ++i)
    add_sentence(translations->sentence(static_cast<std::int64_t>(i)),
                 test.target.sentence(kept[i]), q.counts);
  q.sentences = static_cast<std::int64_t>(kept.size());
  q.bleu = corpus_bleu(q.counts);
  return q;
}

void add_translation_metrics(result::RunResult& r, const TranslationQuality& q,
                             const std::string& test_path) {
  result::add_metric(
      r, "quality/test_sentences", static_cast<double>(q.sentences), "sentences",
      "test sentences translated and scored" +
          (q.sentences > 0 ? ", at a sentence length of " + std::to_string(q.sentence_length) +
                                 " tokens, translations of up to " +
                                 std::to_string(kTestTranslationLength) + " tokens"
                           : std::string()));
  if (q.left_out > 0)
    result::add_metric(r, "quality/test_sentences_left_out", static_cast<double>(q.left_out),
                       "sentences",
                       "test sentences not translated: their source and [EOS] are longer than the "
                       "model's longest sentence length");
  if (q.sentences == 0) return;  // nothing translated, no score
  const std::string of =
      " of the " + data::with_commas(q.sentences) + " translations of " + test_path + " (" +
      (q.beam > 1 ? "beam search of " + std::to_string(q.beam) : std::string("greedy decoding")) +
      ") against its targets, over token ids";
  result::add_metric(r, "quality/bleu", q.bleu.score, "BLEU", "corpus BLEU" + of);
  for (int n = 0; n < kBleuOrder; ++n)
    result::add_metric(r, "quality/bleu_precision_" + std::to_string(n + 1), q.bleu.precisions[n],
                       "percent",
                       std::to_string(n + 1) + "-gram precision" + of +
                           " (clipped; smoothed where no n-gram matched)");
  result::add_metric(r, "quality/bleu_brevity_penalty", q.bleu.brevity_penalty, "ratio",
                     "BLEU's brevity penalty: translations " +
                         data::with_commas(q.counts.hypothesis_length) + " tokens, references " +
                         data::with_commas(q.counts.reference_length));
}

bool add_test_set_quality(result::RunResult& r, const std::string& test_path,
                          const std::function<std::optional<TranslationQuality>()>& evaluate) {
  try {
    const std::optional<TranslationQuality> quality = evaluate();
    if (!quality) return false;
    add_translation_metrics(r, *quality, test_path);
  } catch (const Error& e) {
    add_translation_failure(r, e);
  }
  return true;
}

void add_translation_failure(result::RunResult& r, const Error& e) {
  std::string what = std::string("the test set was not scored: ") + e.what();
  if (e.kind() == ErrorKind::kResource)
    what +=
        " (the decoder is built beside the trained model, at the run's batch: a smaller "
        "--batch or --beam leaves it room)";
  result::add_metric(r, "quality/test_set_failed", 1, "bool", what);
}

}  // namespace dlbench::runner
