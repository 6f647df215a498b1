// The text corpus reader and its skip-gram pairs: words as text8 was made (letter runs,
// lowercased), the vocabulary by count with rare words dropped, files that are not text refused
// with the file and line named (a usage error, exit 2); pairs only within the window, frequent
// words subsampled, the order decided by the seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/corpus_source.h"
#include "engine/data/text_corpus.h"
#include "tests/support/data_file.h"
#include "tests/support/isolated_home.h"

namespace dlbench::data {
namespace {

using testing::write_data_file;

TEST(TextCorpusTest, WordsAreLowercasedLetterRunsAndRareWordsAreDropped) {
  const std::string path = write_data_file("small.txt",
                                           "The cat sat; the CAT's hat.\r\n"
                                           "1:1 The hat, the cat-hat!\n"
                                           "a mat\n");
  const Corpus c = read_text_corpus(path, 2);
  EXPECT_EQ(c.word_count, 14);  // the cat sat the cat s hat / the hat the cat hat / a mat
  EXPECT_EQ(c.vocabulary, (std::vector<std::string>{"the", "cat", "hat"}));
  EXPECT_EQ(c.counts, (std::vector<std::int64_t>{4, 3, 3}));
  // sat, s, a and mat are seen once: dropped from the text, which closes up around them.
  EXPECT_EQ(c.tokens, (std::vector<std::int32_t>{0, 1, 0, 1, 2, 0, 2, 0, 1, 2}));
}

TEST(TextCorpusTest, LettersOfEveryScriptAreWordsAndPunctuationSeparates) {
  // "É" lowercases to "é"; Cyrillic letters are a word; the em dash, the curly quotes, the
  // non-breaking space and the byte-order mark separate words.
  const std::string path = write_data_file("scripts.txt",
                                           "\xef\xbb\xbf"
                                           "CAF\xc3\x89\xe2\x80\x94"
                                           "\xd0\xb6\xd0\xb8\xd0\xb7\xd0\xbd\xd1\x8c "
                                           "\xe2\x80\x9c"
                                           "caf\xc3\xa9\xe2\x80\x9d\xc2\xa0"
                                           "\xd0\xb6\xd0\xb8\xd0\xb7\xd0\xbd\xd1\x8c");
  const Corpus c = read_text_corpus(path, 2);
  EXPECT_EQ(c.vocabulary,
            (std::vector<std::string>{"caf\xc3\xa9", "\xd0\xb6\xd0\xb8\xd0\xb7\xd0\xbd\xd1\x8c"}));
  EXPECT_EQ(c.tokens, (std::vector<std::int32_t>{0, 1, 0, 1}));
}

// The one-line usage error read_text_corpus gives for a file holding `text`.
std::string refusal(const std::string& text, int min_count = 1) {
  return testing::usage_refusal(
      "bad.txt", text, [&](const std::string& path) { read_text_corpus(path, min_count); });
}

TEST(TextCorpusTest, FilesThatAreNotTextAreRefusedNamingTheLine) {
  EXPECT_NE(
      refusal(std::string("one two\nthree\nfour\0five", 19)).find("bad.txt:3: control byte 0x00"),
      std::string::npos);
  EXPECT_NE(refusal(std::string("one two\nthree \xff four\n"))
                .find("bad.txt:2: bytes that are "
                      "not UTF-8"),
            std::string::npos);
  // A sequence cut short by the end of the file, a stray continuation byte, a lead byte UTF-8
  // never uses, an overlong form, a surrogate and a code point past U+10FFFF.
  for (const char* bad : {"one two \xc3", "one \x80 two", "one \xf8\x88\x80\x80\x80",
                          "ab\xe0\x83\xa9"
                          "cd",
                          "ab\xc1\xa9"
                          "cd",
                          "ab\xed\xa0\x80"
                          "cd",
                          "ab\xf4\x90\x80\x80"
                          "cd"})
    EXPECT_NE(refusal(bad).find("not UTF-8"), std::string::npos) << bad;
  EXPECT_NE(refusal("\x1f\x8b\x08\x00 text8").find("is a gzip archive, not text"),
            std::string::npos);
  EXPECT_NE(refusal("PK\x03\x04text8").find("is a zip archive"), std::string::npos);
  EXPECT_NE(refusal("BZh91AY&SY").find("is a bzip2 archive"), std::string::npos);
  EXPECT_NE(refusal(std::string("\xfd"
                                "7zXZ\0 text8",
                                12))
                .find("is a xz archive"),
            std::string::npos);
  EXPECT_NE(refusal("\x28\xb5\x2f\xfd text8").find("is a zstd archive"), std::string::npos);
  EXPECT_NE(refusal("").find("holds 0 word(s) seen 1 times or more"), std::string::npos);
  EXPECT_NE(refusal("1984, 2001: 42!").find("holds 0 word(s)"), std::string::npos);
  EXPECT_NE(refusal("to be or not to go", 2).find("holds 1 word(s) seen 2 times"),
            std::string::npos);
  EXPECT_NO_THROW(read_text_corpus(write_data_file("two.txt", "to be or not to be"), 2))
      << "two words are enough";
}

TEST(TextCorpusTest, AMissingFileIsAUsageError) {
  try {
    read_text_corpus(testing::isolated_home() + "/missing.txt");
    ADD_FAILURE() << "read a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("cannot read the text file"), std::string::npos);
  }
}

struct Drawn {
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  std::int64_t words_read = 0;  // the source's count after the last batch
};

// Draws `steps` batches of `batch` pairs from a skip-gram source over `corpus`.
Drawn draw(Corpus corpus, std::uint64_t seed, int steps, std::int64_t batch) {
  const auto data = std::make_shared<CorpusData>(std::move(corpus));
  const auto vocabulary = static_cast<std::int64_t>(data->corpus().vocabulary.size());
  const std::vector<InputSpec> specs = {
      {"words", {batch}, DType::kI32, uniform_int(0, vocabulary), "centre words"},
      {"contexts", {batch}, DType::kI32, uniform_int(0, vocabulary), "context words"}};
  auto be = backend::make_backend(Device::cpu());
  auto source = data->source(specs, seed);
  std::vector<std::int32_t> words(static_cast<std::size_t>(batch)),
      contexts(static_cast<std::size_t>(batch));
  const Tensor inputs[] = {Tensor(words.data(), {batch}, DType::kI32, Device::cpu()),
                           Tensor(contexts.data(), {batch}, DType::kI32, Device::cpu())};
  Drawn out;
  for (int s = 0; s < steps; ++s) {
    source->fill(*be, inputs);
    for (std::size_t i = 0; i < words.size(); ++i) out.pairs.emplace_back(words[i], contexts[i]);
  }
  const auto read = source->read_count();
  EXPECT_TRUE(read.has_value());
  if (read) {
    EXPECT_EQ(read->unit, "words");
    out.words_read = read->count;
  }
  return out;
}

std::vector<std::pair<std::int32_t, std::int32_t>> draw_pairs(Corpus corpus, std::uint64_t seed,
                                                              int steps, std::int64_t batch) {
  return draw(std::move(corpus), seed, steps, batch).pairs;
}

// Words 0..499 in order, five times over: each is 1/500 of the text, too rare to subsample,
// so word w's neighbours in the text are w +- 1..5 (mod 500).
Corpus counting_corpus() {
  Corpus c;
  c.path = "counting";
  for (int w = 0; w < 500; ++w) {
    std::string word = "w";  // built in two steps: GCC 12 warns wrongly on "w" + to_string
    word += std::to_string(w);
    c.vocabulary.push_back(word), c.counts.push_back(5);
  }
  for (int pass = 0; pass < 5; ++pass)
    for (int w = 0; w < 500; ++w) c.tokens.push_back(w);
  c.word_count = static_cast<std::int64_t>(c.tokens.size());
  return c;
}

TEST(SkipGramSourceTest, PairsAreWordsWithinTheWindowOfEachOther) {
  const auto pairs = draw_pairs(counting_corpus(), 7, 40, 256);
  std::map<int, int> by_distance;
  for (const auto& [word, context] : pairs) {
    int d = (context - word + 500) % 500;
    if (d > 250) d -= 500;
    ASSERT_TRUE(d != 0 && std::abs(d) <= kWindow) << word << " paired with " << context;
    ++by_distance[std::abs(d)];
  }
  // The window shrinks at random to 1..5: nearer words are paired more often, every reach occurs.
  for (int d = 1; d < kWindow; ++d) EXPECT_GT(by_distance[d], by_distance[d + 1]) << d;
  EXPECT_GT(by_distance[kWindow], 0);
}

TEST(SkipGramSourceTest, TheSeedDecidesTheOrder) {
  EXPECT_EQ(draw_pairs(counting_corpus(), 7, 4, 100), draw_pairs(counting_corpus(), 7, 4, 100));
  EXPECT_NE(draw_pairs(counting_corpus(), 7, 4, 100), draw_pairs(counting_corpus(), 8, 4, 100));
}

TEST(SkipGramSourceTest, FrequentWordsAreSubsampled) {
  // "the" (id 0) is every other word: the reference keeps about 4.7 % of its occurrences, so it
  // is about 4.5 % of the centre words, not half of them; the 500 others are always kept.
  Corpus c = counting_corpus();
  std::vector<std::int32_t> tokens;
  for (std::int32_t t : c.tokens) tokens.push_back(0), tokens.push_back(t + 1);
  c.vocabulary.insert(c.vocabulary.begin(), "the");
  c.counts.insert(c.counts.begin(), 2500);
  c.tokens = tokens;
  const Drawn drawn = draw(c, 3, 50, 256);
  std::int64_t the = 0;
  for (const auto& [word, context] : drawn.pairs) the += word == 0;
  const double share = static_cast<double>(the) / static_cast<double>(drawn.pairs.size());
  EXPECT_GT(share, 0.02);
  EXPECT_LT(share, 0.08);
  // The words read count the dropped occurrences too: about 1 / (6 x 0.52) of the pairs here,
  // against 1/6 where nothing is dropped.
  const Drawn all_kept = draw(counting_corpus(), 3, 50, 256);
  const double dropped = double(drawn.words_read) / double(drawn.pairs.size());
  const double kept = double(all_kept.words_read) / double(all_kept.pairs.size());
  EXPECT_NEAR(kept, 1.0 / 6, 0.02);
  EXPECT_NEAR(dropped, 1.0 / (6 * 0.52), 0.04);
}

}  // namespace
}  // namespace dlbench::data
