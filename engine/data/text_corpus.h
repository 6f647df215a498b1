// A plain-text corpus as Word2Vec reads it: text8 (one line of 17M lowercase words) or any
// UTF-8 text. Words are runs of letters: ASCII letters and every character beyond ASCII but
// punctuation, symbols and spaces (so Greek or Cyrillic reads as words), with ASCII's and
// Latin-1's capitals lowercased. Digits and punctuation separate words (text8's script spelled
// digits out instead; text8 itself reads unchanged). The vocabulary is every word seen at
// least `min_count` times, most frequent first, and the text becomes their ids, rarer words
// dropped (as the reference's reader drops them, so windows reach across them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlbench::data {

constexpr int kMinWordCount = 5;  // the reference's -min-count and text8's 71,290 words

struct Corpus {
  std::string path;
  std::int64_t word_count = 0;  // words in the text, rare ones included
  int min_count = kMinWordCount;
  std::vector<std::string> vocabulary;  // by descending count, ties in byte order
  std::vector<std::int64_t> counts;     // per vocabulary word
  std::vector<std::int32_t> tokens;     // the text's vocabulary words, as ids, in order
};

// Reads and counts a text file. A file that cannot be read, is not text (a NUL or other control
// byte, bytes that are not UTF-8, a compressed archive), or holds fewer than two words seen
// `min_count` times throws Error(kUsage) naming the file (and the line, where one is at fault).
Corpus read_text_corpus(const std::string& path, int min_count = kMinWordCount);

}  // namespace dlbench::data
