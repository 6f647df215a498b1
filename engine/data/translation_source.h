// A parallel corpus of token ids as a translation model's data (`--data` for transformer): the
// sentence pairs served in a random order, a new one on every pass, each padded to the model's
// sentence length with [EOS] after both sides and [BOS] before the decoder's input
// (translation_batch.h lays a row out). Pairs of which a side does not fit with its [EOS] are
// left out, as fairseq leaves out pairs past its --max-positions; the tokens/s line says how many.
#pragma once

#include <memory>
#include <string>

#include "engine/data/dataset.h"
#include "engine/data/sentence_pairs.h"

namespace dlbench::data {

class TranslationData final : public Dataset, public std::enable_shared_from_this<TranslationData> {
 public:
  explicit TranslationData(SentencePairs pairs) : pairs_(std::move(pairs)) {}
  const SentencePairs& pairs() const { return pairs_; }
  std::string describe() const override;
  // Fills every input of kind translation. Error(kUsage) when the corpus's ids reach past the
  // model's vocabulary or no pair fits its sentence length.
  std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                     std::uint64_t seed) const override;

 private:
  SentencePairs pairs_;
};

std::shared_ptr<const Dataset> read_translation_data(const std::string& path);

}  // namespace dlbench::data
