// A parallel corpus of token ids, as a translation model trains on one once it is tokenized into
// BPE ids: one sentence pair per line, the source sentence's ids, a tab, the target sentence's
// ids (`paste source.ids target.ids` makes it from the usual two files of one sentence per line).
// The reader adds [EOS] and [BOS] itself, so the ids are the sentences' own tokens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/data/translation_batch.h"

namespace dlbench::data {

// Sentence s's tokens: [offsets[s], offsets[s + 1]) of tokens.
struct TokenSentences {
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> offsets = {0};
  std::int64_t count() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
  void add(std::span<const std::int32_t> sentence) {
    tokens.insert(tokens.end(), sentence.begin(), sentence.end());
    offsets.push_back(static_cast<std::int64_t>(tokens.size()));
  }
  std::span<const std::int32_t> sentence(std::int64_t s) const {
    const auto at = static_cast<std::size_t>(s);
    return {tokens.data() + offsets[at], static_cast<std::size_t>(offsets[at + 1] - offsets[at])};
  }
};

struct SentencePairs {
  std::string path;
  TokenSentences source, target;  // pair p is source sentence p and target sentence p
  std::int32_t largest_id = -1;
  std::int64_t count() const { return source.count(); }
};

// The ids below it, padding, [BOS] and [EOS] (translation_batch.h's SentenceIds), are the
// reader's to place: a corpus may not hold them.
inline constexpr std::int32_t kFirstCorpusId = SentenceIds{}.unk;

// Error(kUsage) naming the file and line for a line without a tab, an empty side, what is not a
// token id (a word, a negative or too large number, a compressed file's bytes) or is one of the
// ids the reader places, and for a file with no pairs at all. Lines of nothing but spaces and
// tabs are skipped.
SentencePairs read_sentence_pairs(const std::string& path);

}  // namespace dlbench::data
