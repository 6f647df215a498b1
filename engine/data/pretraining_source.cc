#include "engine/data/pretraining_source.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/dataset_helpers.h"
#include "engine/data/pretraining_batch.h"

namespace dlbench::data {
namespace {

constexpr double kShortShare = 0.1;  // create_pretraining_data.py's short_seq_prob
constexpr double kRandomNextShare = 0.5;
constexpr int kOtherDocumentTries = 10;  // as the script: then the same document will do

class PretrainingSource final : public DataSource {
 public:
  PretrainingSource(std::shared_ptr<const PretrainingData> data, std::vector<InputSpec> inputs,
                    PretrainingShape shape, std::uint64_t seed)
      : data_(std::move(data)),
        docs_(data_->documents()),
        inputs_(std::move(inputs)),
        shape_(shape),
        state_(splitmix64(seed ^ 0x636f72707573ull)) {  // "corpus"
    // Replicas (other seeds) start in other documents.
    document_ = splitmix64_between(state_, 0, docs_.document_count() - 1);
    sentence_ = docs_.documents[static_cast<std::size_t>(document_)];
  }
  std::string name() const override { return "token documents"; }

  std::optional<ReadCount> read_count() const override {
    return ReadCount{"tokens", read_,
                     "tokens of the corpus's sentences made into sequences, those cut to fit "
                     "included, random next segments not (of a sentence longer than a sequence, "
                     "the window taken)"};
  }

  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override {
    PretrainingBatch batch = empty_pretraining_batch(shape_);
    for (std::int64_t n = 0; n < shape_.batch; ++n) next_sequence(n, batch);
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const auto field = static_cast<PretrainingField>(static_cast<int>(inputs_[k].values.a));
      backend.from_host(batch.field(field).data(), inputs[k]);
    }
  }

 private:
  std::int64_t document_end() const {
    return docs_.documents[static_cast<std::size_t>(document_) + 1];
  }

  void next_document() {
    document_ = (document_ + 1) % docs_.document_count();
    sentence_ = docs_.documents[static_cast<std::size_t>(document_)];
  }

  // Sentence s, or a random window of `most` tokens of it where it is longer (a text without
  // sentence breaks), so no sequence copies or cuts more than a sequence's worth.
  std::span<const std::int32_t> window(std::int64_t s, std::int64_t most) {
    const std::span<const std::int32_t> all = docs_.sentence(s);
    if (static_cast<std::int64_t>(all.size()) <= most) return all;
    const std::int64_t from =
        splitmix64_between(state_, 0, static_cast<std::int64_t>(all.size()) - most);
    return all.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(most));
  }

  static void append(std::vector<std::int32_t>& to, std::span<const std::int32_t> sentence) {
    to.insert(to.end(), sentence.begin(), sentence.end());
  }

  // Segment B from a random place in another document (this one when there is no other), up to
  // `target` tokens.
  std::vector<std::int32_t> random_segment(std::int64_t target, std::int64_t most) {
    std::int64_t other = document_;
    for (int i = 0; i < kOtherDocumentTries && other == document_ && docs_.document_count() > 1;
         ++i)
      other = splitmix64_between(state_, 0, docs_.document_count() - 1);
    const std::int64_t first = docs_.documents[static_cast<std::size_t>(other)];
    const std::int64_t end = docs_.documents[static_cast<std::size_t>(other) + 1];
    std::vector<std::int32_t> b;
    for (std::int64_t s = splitmix64_between(state_, first, end - 1);
         s < end && static_cast<std::int64_t>(b.size()) < target; ++s)
      append(b, window(s, most));
    return b;
  }

  void next_sequence(std::int64_t n, PretrainingBatch& batch) {
    const std::int64_t most = shape_.sequence - 3;  // [CLS], [SEP], [SEP]
    const std::int64_t target =
        splitmix64_unit(state_) < kShortShare ? splitmix64_between(state_, 2, most) : most;
    if (sentence_ >= document_end()) next_document();
    // The document's next sentences, up to the target.
    std::vector<std::int64_t> gathered;
    std::vector<std::span<const std::int32_t>> taken;
    std::int64_t tokens = 0;
    while (sentence_ < document_end() && tokens < target) {
      gathered.push_back(sentence_);
      taken.push_back(window(sentence_++, most));
      tokens += static_cast<std::int64_t>(taken.back().size());
    }
    const auto count = static_cast<std::int64_t>(gathered.size());
    const std::int64_t a_end = count >= 2 ? splitmix64_between(state_, 1, count - 1) : 1;
    std::vector<std::int32_t> a, b;
    for (std::int64_t k = 0; k < a_end; ++k) append(a, taken[static_cast<std::size_t>(k)]);
    const bool random_next = count == 1 || splitmix64_unit(state_) < kRandomNextShare;
    if (random_next) {
      b = random_segment(std::max<std::int64_t>(1, target - static_cast<std::int64_t>(a.size())),
                         most);
      sentence_ = gathered[static_cast<std::size_t>(a_end - 1)] + 1;  // the rest is read again
    } else {
      for (std::int64_t k = a_end; k < count; ++k) append(b, taken[static_cast<std::size_t>(k)]);
    }
    for (std::int64_t k = 0; k < (random_next ? a_end : count); ++k)
      read_ += static_cast<std::int64_t>(taken[static_cast<std::size_t>(k)].size());
    // Cut the longer segment, at its front or back at random, until the pair fits.
    std::size_t a_from = 0, a_to = a.size(), b_from = 0, b_to = b.size();
    while ((a_to - a_from) + (b_to - b_from) > static_cast<std::size_t>(most)) {
      const bool cut_a = a_to - a_from > b_to - b_from;
      std::size_t& from = cut_a ? a_from : b_from;
      std::size_t& to = cut_a ? a_to : b_to;
      if (splitmix64_unit(state_) < 0.5)
        ++from;
      else
        --to;
    }
    write_pretraining_row(shape_, n, std::span(a).subspan(a_from, a_to - a_from),
                          std::span(b).subspan(b_from, b_to - b_from), random_next, state_, batch);
  }

  std::shared_ptr<const PretrainingData> data_;
  const TokenDocuments& docs_;
  std::vector<InputSpec> inputs_;
  PretrainingShape shape_;
  std::uint64_t state_;
  std::int64_t document_ = 0, sentence_ = 0;
  std::int64_t read_ = 0;
};

}  // namespace

std::string PretrainingData::describe() const {
  const TokenDocuments& d = documents_;
  return "token documents " + d.path + ": " + with_commas(d.document_count()) + " documents, " +
         with_commas(d.sentence_count()) + " sentences, " +
         with_commas(static_cast<std::int64_t>(d.tokens.size())) + " tokens";
}

std::unique_ptr<DataSource> PretrainingData::source(const std::vector<InputSpec>& inputs,
                                                    std::uint64_t seed) const {
  const std::size_t ids = int_input_index(inputs, "ids", "token documents");
  const Distribution& d = inputs[ids].values;
  DLBENCH_CHECK(d.kind == Distribution::Kind::kPretraining && d.sequence > 0,
                "token documents: the ids input is not pretraining data");
  PretrainingShape shape;
  shape.sequence = d.sequence;
  shape.batch = inputs[ids].shape.numel() / d.sequence;
  shape.vocabulary = static_cast<std::int64_t>(d.b);
  shape.max_predictions = d.predictions;
  for (const InputSpec& in : inputs)
    DLBENCH_CHECK(in.values.kind == Distribution::Kind::kPretraining,
                  "token documents: input " + in.name + " is not pretraining data");
  if (documents_.largest_id >= shape.vocabulary)
    throw Error(ErrorKind::kUsage,
                documents_.path + " holds token id " + std::to_string(documents_.largest_id) +
                    ", past the model's vocabulary of " + with_commas(shape.vocabulary) + " ids",
                "tokenize the text with the model's own WordPiece vocabulary");
  return std::make_unique<PretrainingSource>(shared_from_this(), inputs, shape, seed);
}

std::shared_ptr<const Dataset> read_pretraining_data(const std::string& path) {
  return std::make_shared<PretrainingData>(read_token_documents(path));
}

}  // namespace dlbench::data
