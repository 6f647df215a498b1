#include "engine/data/corpus_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/dataset_helpers.h"

namespace dlbench::data {
namespace {

// Passes in a row that may make no pair before a text counts as too short.
constexpr int kMaxEmptyPasses = 1000;

// The reference's chance of keeping one occurrence of a word seen `count` times among `total`:
// (sqrt(count / (t total)) + 1) t total / count, which is 1 or more for words rarer than about
// 2.6 t total.
std::vector<double> keep_chances(const Corpus& corpus) {
  double total = 0;
  for (std::int64_t c : corpus.counts) total += static_cast<double>(c);
  const double t = kSubsample * total;
  std::vector<double> keep;
  for (std::int64_t c : corpus.counts) {
    const double f = static_cast<double>(c);
    keep.push_back((std::sqrt(f / t) + 1) * t / f);
  }
  return keep;
}

class SkipGramSource final : public DataSource {
 public:
  SkipGramSource(std::shared_ptr<const CorpusData> data, std::size_t words_input,
                 std::size_t contexts_input, std::uint64_t seed)
      : data_(std::move(data)),
        corpus_(data_->corpus()),
        words_input_(words_input),
        contexts_input_(contexts_input),
        keep_(keep_chances(corpus_)),
        state_(seed) {
    // Replicas (other seeds) start at other places in the text.
    start_ = static_cast<std::size_t>(splitmix64_next(state_) % corpus_.tokens.size());
  }
  std::string name() const override { return "text corpus"; }

  // The text's words walked past, kept by subsampling or not, as the reference C code counts
  // the words it trains on (rare words dropped from the vocabulary are not counted): those up
  // to the last centre word used.
  std::optional<ReadCount> read_count() const override {
    const auto words = static_cast<std::int64_t>(corpus_.tokens.size());
    return ReadCount{"words", passes_ * words + last_centre_at_ + 1,
                     "words of the text read, those subsampling dropped included (as the "
                     "reference C code counts them)"};
  }

  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override {
    const Tensor& words = inputs[words_input_];
    const auto n = static_cast<std::size_t>(words.numel());
    words_.resize(n), contexts_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      while (next_pair_ == pairs_.size()) next_centre();
      words_[i] = pairs_[next_pair_].first;
      contexts_[i] = pairs_[next_pair_].second;
      ++next_pair_;
    }
    backend.from_host(words_.data(), words);
    backend.from_host(contexts_.data(), inputs[contexts_input_]);
  }

 private:
  struct Kept {
    std::int32_t id;
    std::int64_t at;  // its place in the pass, from 0
  };

  // Appends the pass's next word that subsampling keeps; false at the end of the pass. The pass
  // is walked as it is used, so no step pays for subsampling a whole text at once.
  bool pull() {
    const std::vector<std::int32_t>& tokens = corpus_.tokens;
    const auto size = static_cast<std::int64_t>(tokens.size());
    while (walked_ < size) {
      const std::int64_t k = walked_++;
      const std::int32_t id = tokens[(start_ + static_cast<std::size_t>(k)) % tokens.size()];
      const double keep = keep_[static_cast<std::size_t>(id)];
      if (keep >= 1 || splitmix64_unit(state_) < keep) {
        window_.push_back({id, k});
        return true;
      }
    }
    return false;
  }

  // A fresh pass over the whole text from start_ (wrapping round); windows do not span passes.
  void new_pass() {
    if (++idle_passes_ > kMaxEmptyPasses)
      throw Error(ErrorKind::kUsage,
                  corpus_.path + ": subsampling frequent words leaves too little text to pair",
                  "give a longer text");
    ++passes_;
    walked_ = 0;
    last_centre_at_ = -1;
    window_.clear();
    centre_ = 0;
  }

  // The next centre word's pairs, with every kept word within a reach drawn from 1..kWindow.
  void next_centre() {
    while (centre_ >= window_.size())
      if (!pull()) new_pass();
    const auto reach = static_cast<std::size_t>(1 + splitmix64_next(state_) % kWindow);
    while (window_.size() <= centre_ + reach && pull()) {
    }
    pairs_.clear();
    next_pair_ = 0;
    const std::size_t c = centre_;
    const std::size_t first = c >= reach ? c - reach : 0;
    const std::size_t last = std::min(window_.size() - 1, c + reach);
    for (std::size_t j = first; j <= last; ++j)
      if (j != c) pairs_.emplace_back(window_[c].id, window_[j].id);
    if (!pairs_.empty()) idle_passes_ = 0;
    last_centre_at_ = window_[c].at;
    // Keep the kWindow words left of the next centre, drop the rest.
    if (++centre_ > static_cast<std::size_t>(kWindow)) window_.pop_front(), --centre_;
  }

  std::shared_ptr<const CorpusData> data_;  // keeps corpus_ alive
  const Corpus& corpus_;
  std::size_t words_input_, contexts_input_;
  std::vector<double> keep_;
  std::uint64_t state_;
  std::size_t start_ = 0;
  std::int64_t passes_ = 0;           // passes finished
  std::int64_t walked_ = 0;           // words of this pass looked at
  std::int64_t last_centre_at_ = -1;  // the last centre's place in this pass
  std::deque<Kept> window_;           // kept words around the next centre
  std::size_t centre_ = 0;            // the next centre in window_
  int idle_passes_ = 0;               // passes in a row that made no pair
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs_;  // the current centre's
  std::size_t next_pair_ = 0;
  std::vector<std::int32_t> words_, contexts_;  // the batch on the host
};

}  // namespace

std::string CorpusData::describe() const {
  const Corpus& c = corpus_;
  char sample[32];
  std::snprintf(sample, sizeof sample, "%g", kSubsample);
  return "text corpus " + c.path + ": " + with_commas(c.word_count) + " words; vocabulary " +
         with_commas(static_cast<std::int64_t>(c.vocabulary.size())) + " words (seen " +
         std::to_string(c.min_count) + " times or more), " +
         with_commas(static_cast<std::int64_t>(c.tokens.size())) + " words of the text; window " +
         std::to_string(kWindow) + ", frequent words subsampled at " + sample;
}

std::unique_ptr<DataSource> CorpusData::source(const std::vector<InputSpec>& inputs,
                                               std::uint64_t seed) const {
  const std::size_t words = int_input_index(inputs, "words", "text corpus");
  const std::size_t contexts = int_input_index(inputs, "contexts", "text corpus");
  DLBENCH_CHECK(inputs[words].shape == inputs[contexts].shape,
                "text corpus: words and contexts differ in length");
  return std::make_unique<SkipGramSource>(shared_from_this(), words, contexts, seed);
}

std::shared_ptr<const Dataset> read_corpus_data(const std::string& path) {
  return std::make_shared<CorpusData>(read_text_corpus(path));
}

}  // namespace dlbench::data
