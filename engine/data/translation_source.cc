#include "engine/data/translation_source.h"

#include <algorithm>
#include <cstdint>

#include "engine/core/error.h"
#include "engine/core/splitmix64.h"
#include "engine/data/dataset_helpers.h"
#include "engine/data/translation_batch.h"

namespace dlbench::data {
namespace {

class TranslationSource final : public DataSource {
 public:
  TranslationSource(std::shared_ptr<const TranslationData> data, std::vector<InputSpec> inputs,
                    TranslationShape shape, std::vector<std::int64_t> fitting, std::uint64_t seed)
      : data_(std::move(data)),
        inputs_(std::move(inputs)),
        shape_(shape),
        batch_(empty_translation_batch(shape_)),
        order_(std::move(fitting)),
        state_(splitmix64(seed ^ 0x7061697273ull)) {  // "pairs"
    splitmix64_shuffle(order_, state_);
    const std::int64_t pairs = data_->pairs().count();
    const std::int64_t left_out = pairs - static_cast<std::int64_t>(order_.size());
    what_ =
        "source and target tokens of the sentence pairs served, [EOS] included, padding "
        "left out";
    if (left_out > 0)
      what_ += " (" + with_commas(left_out) + " of " + with_commas(pairs) + " pairs do not fit " +
               std::to_string(shape_.sequence) + " positions with [EOS] and are left out)";
  }
  std::string name() const override { return "sentence pairs"; }

  std::optional<ReadCount> read_count() const override { return ReadCount{"tokens", read_, what_}; }

  void fill(backend::Backend& backend, std::span<const Tensor> inputs) override {
    // One host batch serves every step: write_translation_row clears each row it writes.
    const SentencePairs& pairs = data_->pairs();
    for (std::int64_t n = 0; n < shape_.batch; ++n) {
      if (next_ == order_.size()) {  // a new pass, in a new order
        splitmix64_shuffle(order_, state_);
        next_ = 0;
      }
      const std::int64_t p = order_[next_++];
      write_translation_row(shape_, n, pairs.source.sentence(p), pairs.target.sentence(p), batch_);
    }
    read_ += batch_.tokens();
    DLBENCH_CHECK(inputs.size() == inputs_.size(), "sentence pairs: one tensor per input");
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const auto field = static_cast<TranslationField>(static_cast<int>(inputs_[k].values.a));
      const std::vector<std::int32_t> values =
          laid_out(batch_, field, shape_.sequence, inputs_[k].values.time_major);
      DLBENCH_CHECK(inputs[k].dtype() == DType::kI32 &&
                        static_cast<std::int64_t>(values.size()) == inputs[k].numel(),
                    "sentence pairs: input " + inputs_[k].name + " is not of the batch's shape");
      backend.from_host(values.data(), inputs[k]);
    }
  }

 private:
  std::shared_ptr<const TranslationData> data_;
  std::vector<InputSpec> inputs_;
  TranslationShape shape_;
  TranslationBatch batch_;
  std::vector<std::int64_t> order_;  // the pairs that fit, in this pass's order
  std::size_t next_ = 0;
  std::uint64_t state_;
  std::int64_t read_ = 0;
  std::string what_;
};

}  // namespace

std::string TranslationData::describe() const {
  const SentencePairs& p = pairs_;
  return "sentence pairs " + p.path + ": " + with_commas(p.count()) + " pairs, " +
         with_commas(static_cast<std::int64_t>(p.source.tokens.size())) + " source and " +
         with_commas(static_cast<std::int64_t>(p.target.tokens.size())) + " target tokens";
}

std::unique_ptr<DataSource> TranslationData::source(const std::vector<InputSpec>& inputs,
                                                    std::uint64_t seed) const {
  const std::size_t ids = int_input_index(inputs, "source_ids", "sentence pairs");
  const Distribution& d = inputs[ids].values;
  DLBENCH_CHECK(d.kind == Distribution::Kind::kTranslation && d.sequence > 0,
                "sentence pairs: the source_ids input is not translation data");
  for (const InputSpec& in : inputs)
    DLBENCH_CHECK(in.values.kind == Distribution::Kind::kTranslation,
                  "sentence pairs: input " + in.name + " is not translation data");
  TranslationShape shape;
  shape.sequence = d.sequence;
  shape.batch = inputs[ids].shape.numel() / d.sequence;
  shape.vocabulary = static_cast<std::int64_t>(d.b);
  if (pairs_.largest_id >= shape.vocabulary)
    throw Error(ErrorKind::kUsage,
                pairs_.path + " holds token id " + with_commas(pairs_.largest_id) +
                    ", past the model's vocabulary of " + with_commas(shape.vocabulary) + " ids",
                "token ids must be below " + with_commas(shape.vocabulary) +
                    ": a joined BPE vocabulary of at most that many entries");
  std::vector<std::int64_t> fitting;
  std::size_t shortest = SIZE_MAX;  // of the pairs' longer sides
  for (std::int64_t p = 0; p < pairs_.count(); ++p) {
    const std::size_t side =
        std::max(pairs_.source.sentence(p).size(), pairs_.target.sentence(p).size());
    shortest = std::min(shortest, side);
    if (static_cast<std::int64_t>(side) + 1 <= shape.sequence) fitting.push_back(p);
  }
  if (fitting.empty())
    throw Error(ErrorKind::kUsage,
                "no sentence pair of " + pairs_.path + " fits " + std::to_string(shape.sequence) +
                    " positions: the shortest needs " + std::to_string(shortest + 1) +
                    " (its longer side and [EOS])",
                "build the model at a sentence length of at least " + std::to_string(shortest + 1) +
                    " tokens");
  return std::make_unique<TranslationSource>(shared_from_this(), inputs, shape, std::move(fitting),
                                             seed);
}

std::shared_ptr<const Dataset> read_translation_data(const std::string& path) {
  return std::make_shared<TranslationData>(read_sentence_pairs(path));
}

}  // namespace dlbench::data
