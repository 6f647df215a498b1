// Translation quality of a trained translation model on a test set (`--test-data`, sentence pairs
// in the training data's format): every test source is translated with the trained weights (greedy,
// or the run's --beam) and the translations are scored against the test targets by corpus BLEU
// over token ids (bleu.h). The decoder is built at the smallest sentence length the model takes
// that fits the longest test source with its [EOS] (at least the trained one); sources longer than
// the model's longest length are left out and counted. A translation may run to
// kTestTranslationLength tokens whatever the sentence length (only the decoder's buffers depend on
// it), so a short --input does not cut translations longer than their sources.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/result/run_config.h"
#include "bench/result/run_result.h"
#include "bench/runner/bleu.h"
#include "engine/core/error.h"
#include "engine/data/input_spec.h"
#include "engine/data/sentence_pairs.h"
#include "engine/models/model_spec.h"
#include "engine/nn/sentence_translation.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

// [EOS] included: past the longest source the model takes (127 tokens) with room for a
// translation longer than its source.
constexpr std::int64_t kTestTranslationLength = 150;

// Error(kUsage) naming the file when a test token id is past the vocabulary of the trained graph
// (its "source_ids" input): checked before training, so a wrong test set fails at once.
void check_test_set(const data::SentencePairs& test, const std::vector<data::InputSpec>& inputs);

struct TranslationQuality {
  Bleu bleu;
  BleuCounts counts;           // the lengths: translations' and references' tokens
  std::int64_t sentences = 0;  // translated and scored
  std::int64_t left_out = 0;   // sources past the model's longest sentence length
  int sentence_length = 0;     // the decoder's
  int beam = 1;
};

// Translates the test set with `trained`'s weights, outside the measured steps; the batch is the
// run's (at most the test set's size). `progress` is called as each batch begins and may stop
// the translation (false): nullopt then. Runs after the trainer's last step: on CUDA the decoder
// may grow the backend's shared workspace, which the trainer's recorded graphs point into.
std::optional<TranslationQuality> evaluate_translation(
    const models::ModelSpec& model, const models::ModelConfig& trained_config,
    const result::RunConfig& config, const nn::Trainer& trained, backend::Backend& be,
    const data::SentencePairs& test, const nn::TranslatedBatches& progress = {});

// As metrics quality/test_sentences, quality/test_sentences_left_out when some were, and, when a
// sentence was translated, quality/bleu, quality/bleu_precision_1..4 and
// quality/bleu_brevity_penalty.
void add_translation_metrics(result::RunResult& r, const TranslationQuality& q,
                             const std::string& test_path);
// The test set's translation failed after the measured steps (say, out of device memory beside the
// trained model): metric quality/test_set_failed, the error its description. The run's own
// measurement stands and is stored.
void add_translation_failure(result::RunResult& r, const Error& e);

// Runs `evaluate` (the test set's translation after the measured steps, evaluate_translation
// bound to the run) and adds what came of it: the quality metrics, or, where it failed with an
// Error of its own, the failure (add_translation_failure) instead of failing the run. False when
// a stop abandoned it (evaluate gave nothing): no quality to add.
bool add_test_set_quality(result::RunResult& r, const std::string& test_path,
                          const std::function<std::optional<TranslationQuality>()>& evaluate);

}  // namespace dlbench::runner
