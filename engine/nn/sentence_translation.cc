#include "engine/nn/sentence_translation.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/dataset_helpers.h"
#include "engine/data/translation_batch.h"

namespace dlbench::nn {

std::optional<data::TokenSentences> translate_sentences(SequenceDecoder& decoder,
                                                        backend::Backend& backend,
                                                        const data::TokenSentences& sources,
                                                        const TranslatedBatches& on_batch) {
  const std::vector<data::InputSpec>& specs = decoder.encoder().graph().input_specs();
  const data::Distribution& ids =
      specs[data::int_input_index(specs, "source_ids", "a test set")].values;
  for (const data::InputSpec& in : specs)
    DLBENCH_CHECK(
        in.values.kind == data::Distribution::Kind::kTranslation,
        "translating sentences: the encoder's input " + in.name + " is not translation data");
  data::TranslationShape shape;
  shape.batch = decoder.batch();
  shape.sequence = ids.sequence;
  shape.vocabulary = static_cast<std::int64_t>(ids.b);
  shape.special = decoder.ids();

  const std::int64_t count = sources.count();
  std::vector<std::int64_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return sources.sentence(a).size() < sources.sentence(b).size();
  });

  std::vector<std::vector<std::int32_t>> translated(static_cast<std::size_t>(count));
  data::TranslationBatch batch = data::empty_translation_batch(shape);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(decoder.tokens().numel()));
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(shape.batch));
  const std::int64_t batches = (count + shape.batch - 1) / shape.batch;
  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t first = b * shape.batch;
    const std::int64_t real = std::min(shape.batch, count - first);
    if (on_batch && !on_batch(b + 1, batches)) return std::nullopt;
    for (std::int64_t n = 0; n < shape.batch; ++n) {
      const std::span<const std::int32_t> source =
          sources.sentence(order[static_cast<std::size_t>(first + (n < real ? n : 0))]);
      DLBENCH_CHECK(static_cast<std::int64_t>(source.size()) + 1 <= shape.sequence,
                    "translating sentences: a sentence of " + std::to_string(source.size()) +
                        " tokens and its [EOS] do not fit the decoder's " +
                        std::to_string(shape.sequence) + " positions");
      data::write_translation_row(shape, n, source, {}, batch);
    }
    for (std::size_t k = 0; k < specs.size(); ++k) {
      const auto field = static_cast<data::TranslationField>(static_cast<int>(specs[k].values.a));
      const std::vector<std::int32_t> values =
          data::laid_out(batch, field, shape.sequence, specs[k].values.time_major);
      DLBENCH_CHECK(
          static_cast<std::int64_t>(values.size()) == decoder.inputs()[k].numel(),
          "translating sentences: input " + specs[k].name + " is not of the batch's shape");
      backend.from_host(values.data(), decoder.inputs()[k]);
    }
    decoder.decode();
    backend.to_host(decoder.tokens(), tokens.data());
    backend.to_host(decoder.lengths(), lengths.data());
    const data::SentenceIds& special = decoder.ids();
    for (std::int64_t n = 0; n < real; ++n) {
      std::vector<std::int32_t>& out = translated[static_cast<std::size_t>(order[first + n])];
      const std::int32_t length = lengths[static_cast<std::size_t>(n)];
      for (std::int32_t t = 0; t < length; ++t) {
        const std::int32_t token = tokens[static_cast<std::size_t>(t * shape.batch + n)];
        if (t + 1 == length && token == special.eos) break;  // the closing [EOS]
        if (token != special.pad && token != special.bos) out.push_back(token);
      }
    }
  }

  data::TokenSentences out;
  for (const std::vector<std::int32_t>& t : translated) out.add(t);
  return out;
}

}  // namespace dlbench::nn
