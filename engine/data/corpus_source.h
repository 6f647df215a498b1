// A text corpus as a Dataset for skip-gram training: Word2Vec's tables are sized by its
// vocabulary and its negatives drawn by its counts, and each step's (word, context) pairs come
// from a pass over the text as the reference trains: frequent words subsampled anew each pass,
// each centre word paired with every word within a window shrunk at random to 1..kWindow.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataset.h"
#include "engine/data/text_corpus.h"

namespace dlbench::data {

constexpr int kWindow = 5;           // the reference's -window
constexpr double kSubsample = 1e-3;  // the reference's -sample

class CorpusData final : public Dataset, public std::enable_shared_from_this<CorpusData> {
 public:
  explicit CorpusData(Corpus corpus) : corpus_(std::move(corpus)) {}
  const Corpus& corpus() const { return corpus_; }
  std::string describe() const override;
  // Fills the graph's i32 "words" and "contexts" inputs (of one length) with skip-gram pairs.
  std::unique_ptr<DataSource> source(const std::vector<InputSpec>& inputs,
                                     std::uint64_t seed) const override;
  const std::vector<std::string>* vocabulary() const override { return &corpus_.vocabulary; }

 private:
  Corpus corpus_;
};

std::shared_ptr<const Dataset> read_corpus_data(const std::string& path);

}  // namespace dlbench::data
