// A tokenized corpus as BERT's pretraining data (`--data` for bert-base and bert-large): each
// step's sequences are made from its documents as Google's create_pretraining_data.py makes
// its instances, on the fly and anew on every pass.
//
// A sequence aims at the full length (10 % of the time at a length drawn from 2 to it): the
// next sentences of the current document are gathered until they reach it or the document
// ends; a random number of them (at least one) becomes segment A. Half of the time, and always
// when only one sentence was gathered, segment B is random: sentences from a random place in
// another document (in the same one when the corpus has one document, as the script does; the
// sentences it left unused are read again for the next sequence);
// otherwise B is the rest of what was gathered. The longer segment is then cut, at its start or
// its end at random, until the pair fits, and the words are masked as the synthetic batches'
// are (pretraining_batch.h). A sentence longer than the sequence gives a random window of itself,
// so a text without sentence breaks still makes sequences fast (all with random next segments:
// no sentence follows another).
#pragma once

#include <memory>
#include <string>

#include "engine/data/dataset.h"
#include "engine/data/token_documents.h"

namespace dlbench::data {

class PretrainingData final : public Dataset, public std::enable_shared_from_this<PretrainingData> {
 public:
  explicit PretrainingData(TokenDocuments documents) : documents_(std::move(documents)) {}
  const TokenDocuments& documents() const { return documents_; }
  std::string describe() const override;
  // Fills every input of kind pretraining (ids, segments, positions, lengths, masked labels,
  // next-sentence labels; those the graph has). Error(kUsage) when the corpus's ids reach past
  // the model's vocabulary.
  std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                     std::uint64_t seed) const override;

 private:
  TokenDocuments documents_;
};

std::shared_ptr<const Dataset> read_pretraining_data(const std::string& path);

}  // namespace dlbench::data
