// Translating a list of sentences with a SequenceDecoder, as a test set is translated to be
// scored: the sentences are decoded a batch at a time, shortest first (a batch closes when its
// longest sentence has, so like lengths together stop together, as the references sort their
// test sets), and come back in the order they were given. A last batch short of the decoder's is
// filled with copies of its first sentence, whose translations are dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "engine/backend/backend.h"
#include "engine/data/sentence_pairs.h"
#include "engine/nn/sequence_decoder.h"

namespace dlbench::nn {

// Called as each batch begins: its number (from 1), and of how many. Returning false stops the
// translation there.
using TranslatedBatches = std::function<bool(std::int64_t batch, std::int64_t batches)>;

// Each source sentence's translation: the tokens its length counts, without the closing [EOS]
// (a translation that max_length cut has none) and without any padding or [BOS] the model chose
// on the way, as a detokenizer drops them. The decoder's encoder takes "source_ids" and may take
// the other translation fields (data::TranslationField), filled as a target-less batch. nullopt
// when on_batch stopped it. An internal error when a sentence and its [EOS] do not fit the
// decoder's sentence length: the caller builds it long enough.
std::optional<data::TokenSentences> translate_sentences(SequenceDecoder& decoder,
                                                        backend::Backend& backend,
                                                        const data::TokenSentences& sources,
                                                        const TranslatedBatches& on_batch = {});

}  // namespace dlbench::nn
