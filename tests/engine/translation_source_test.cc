// The Transformer's real data: a parallel corpus of token ids (a pair per line, a tab between
// the sides), bad files refused by file and line, and served as the synthetic batches are laid
// out: each side then [EOS], [BOS] before the decoder's input, every pair that fits once per
// pass in a new order, the tokens counted; pairs too long for the sentence length left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/translation_source.h"
#include "tests/support/data_file.h"

namespace dlbench::data {
namespace {

using testing::usage_refusal;
using testing::write_data_file;

constexpr std::int64_t kVocabulary = 1000;

TEST(SentencePairsTest, APairPerLineWithATabBetweenTheSides) {
  const SentencePairs p =
      read_sentence_pairs(write_data_file("pairs.txt", "\n5 6\t7\r\n  \n 8  9 10 \t 11 12\n"));
  ASSERT_EQ(p.count(), 2);
  EXPECT_EQ(p.source.tokens, (std::vector<std::int32_t>{5, 6, 8, 9, 10}));
  EXPECT_EQ(p.target.tokens, (std::vector<std::int32_t>{7, 11, 12}));
  EXPECT_EQ(p.source.sentence(1).size(), 3u);
  EXPECT_EQ(p.target.sentence(0).size(), 1u);
  EXPECT_EQ(p.largest_id, 12);
}

TEST(SentencePairsTest, BadLinesAreRefusedByLine) {
  auto read = [](const std::string& path) { read_sentence_pairs(path); };
  EXPECT_NE(usage_refusal("notab.txt", "5 6\t7\n5 6 7\n", read).find("notab.txt:2: no tab"),
            std::string::npos);
  EXPECT_NE(usage_refusal("tabs.txt", "5\t6\t7\n", read).find(":1: more than one tab"),
            std::string::npos);
  EXPECT_NE(usage_refusal("nosource.txt", " \t7\n", read).find(":1: the source sentence is empty"),
            std::string::npos);
  EXPECT_NE(usage_refusal("notarget.txt", "5\t\n", read).find(":1: the target sentence is empty"),
            std::string::npos);
  EXPECT_NE(usage_refusal("words.txt", "5\tdie Katze\n", read).find(":1: 'die' is not a token"),
            std::string::npos);
  EXPECT_NE(usage_refusal("eos.txt", "5 2\t7\n", read).find(":1: id 2 is padding, [BOS] or [EOS]"),
            std::string::npos);
  EXPECT_NE(usage_refusal("empty.txt", "\n\n", read).find("holds no sentence pairs"),
            std::string::npos);
  try {
    read_sentence_pairs("/nonexistent/pairs.txt");
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
}

std::vector<InputSpec> inputs(std::int64_t batch, std::int64_t sequence) {
  std::vector<InputSpec> specs;
  for (TranslationField f : {TranslationField::kSourceIds, TranslationField::kSourceLengths,
                             TranslationField::kTargetIds, TranslationField::kTargetLengths,
                             TranslationField::kTargetLabels})
    specs.push_back({to_string(f),
                     {is_per_token(f) ? batch * sequence : batch},
                     DType::kI32,
                     translation(f, kVocabulary, sequence),
                     ""});
  return specs;
}

// One batch from the source, its fields on the host in the inputs' order.
std::vector<std::vector<std::int32_t>> next_batch(DataSource& source, backend::Backend& be,
                                                  const std::vector<InputSpec>& specs) {
  std::vector<std::vector<std::int32_t>> host;
  std::vector<Tensor> tensors;
  for (const InputSpec& s : specs) host.emplace_back(static_cast<std::size_t>(s.shape.numel()));
  for (auto& h : host)
    tensors.emplace_back(h.data(), Shape{static_cast<std::int64_t>(h.size())}, DType::kI32,
                         be.device());
  source.fill(be, tensors);
  return host;
}

// Pair k is source (100 + k, 200 + k) and target k + 300 repeated k % 4 + 1 times: a row's ids
// say which pair it holds. Pair 9's source is too long for 8 positions.
std::string corpus() {
  std::string text;
  for (int k = 0; k < 10; ++k) {
    text += std::to_string(100 + k) + " " + std::to_string(200 + k);
    if (k == 9) text += " 5 5 5 5 5 5 5";
    text += "\t";
    for (int w = 0; w <= k % 4; ++w) text += std::to_string(300 + k) + " ";
    text += "\n";
  }
  return text;
}

TEST(TranslationSourceTest, RowsAreLaidOutAsTheSyntheticOnesAndEveryPairComesOncePerPass) {
  auto be = backend::make_backend(Device::cpu());
  const auto data = read_translation_data(write_data_file("corpus.txt", corpus()));
  EXPECT_EQ(data->describe(), "sentence pairs " + testing::isolated_home() +
                                  "/corpus.txt: 10 pairs, 27 source and 23 target tokens");
  constexpr std::int64_t kBatch = 3, kSeq = 8;
  const std::vector<InputSpec> specs = inputs(kBatch, kSeq);
  auto source = data->source(specs, 5);
  ASSERT_TRUE(source->read_count().has_value());
  EXPECT_NE(source->read_count()->what.find("1 of 10 pairs do not fit 8 positions"),
            std::string::npos);
  const SentenceIds t;
  std::vector<int> seen(10, 0);
  std::int64_t tokens = 0;
  for (int step = 0; step < 6; ++step) {  // 18 rows: two passes over the 9 pairs that fit
    const auto b = next_batch(*source, *be, specs);
    for (std::int64_t n = 0; n < kBatch; ++n) {
      const std::int32_t* src = b[0].data() + n * kSeq;
      const std::int32_t* ids = b[2].data() + n * kSeq;
      const std::int32_t* labels = b[4].data() + n * kSeq;
      const int k = src[0] - 100;
      ASSERT_TRUE(k >= 0 && k < 9) << src[0];
      ++seen[static_cast<std::size_t>(k)];
      EXPECT_EQ(src[1], 200 + k);
      EXPECT_EQ(src[2], t.eos);
      EXPECT_EQ(src[3], t.pad);
      EXPECT_EQ(b[1][n], 3);
      const int words = k % 4 + 1;
      EXPECT_EQ(b[3][n], words + 1);
      EXPECT_EQ(ids[0], t.bos);
      for (int w = 0; w < words; ++w) {
        EXPECT_EQ(labels[w], 300 + k);
        EXPECT_EQ(ids[w + 1], 300 + k);
      }
      EXPECT_EQ(labels[words], t.eos);
      EXPECT_EQ(labels[words + 1], -100);
      EXPECT_EQ(ids[words + 1], t.pad);
      tokens += b[1][n] + b[3][n];
    }
    if (step == 2) {  // the first pass: each pair that fits once
      EXPECT_EQ(*std::min_element(seen.begin(), seen.end() - 1), 1);
      EXPECT_EQ(*std::max_element(seen.begin(), seen.end() - 1), 1);
    }
  }
  for (int k = 0; k < 9; ++k) EXPECT_EQ(seen[static_cast<std::size_t>(k)], 2) << k;
  EXPECT_EQ(seen[9], 0);
  EXPECT_EQ(source->read_count()->count, tokens);
}

// A pass that ends inside a batch: the batch's later rows start the next pass, and after four
// batches of 4 (16 rows) every one of the 9 pairs that fit came once or twice, 7 of them twice.
TEST(TranslationSourceTest, APassEndsInsideABatch) {
  auto be = backend::make_backend(Device::cpu());
  const auto data = read_translation_data(write_data_file("corpus.txt", corpus()));
  const std::vector<InputSpec> specs = inputs(4, 8);
  auto source = data->source(specs, 3);
  std::vector<int> seen(10, 0);
  for (int step = 0; step < 4; ++step) {
    const auto b = next_batch(*source, *be, specs);
    for (std::int64_t n = 0; n < 4; ++n) ++seen[static_cast<std::size_t>(b[0][n * 8] - 100)];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end() - 1, 2), 7);
  EXPECT_EQ(std::count(seen.begin(), seen.end() - 1, 1), 2);
  EXPECT_EQ(seen[9], 0);
}

TEST(TranslationSourceTest, OrdersDifferBySeedAndPassesAndRefusalsAreUsageErrors) {
  auto be = backend::make_backend(Device::cpu());
  const auto data = read_translation_data(write_data_file("corpus.txt", corpus()));
  const std::vector<InputSpec> specs = inputs(9, 8);
  auto first = [&](std::uint64_t seed) {
    auto source = data->source(specs, seed);
    const auto pass1 = next_batch(*source, *be, specs)[0];
    const auto pass2 = next_batch(*source, *be, specs)[0];
    EXPECT_NE(pass1, pass2);  // a new order each pass
    return pass1;
  };
  EXPECT_EQ(first(1), first(1));
  EXPECT_NE(first(1), first(2));
  // Ids past the vocabulary, and a sentence length no pair fits.
  try {
    data->source(inputs(2, 8), 1);  // fits
    auto small = inputs(2, 8);
    for (InputSpec& in : small) in.values.b = 250;
    data->source(small, 1);
    ADD_FAILURE() << "ids past the vocabulary accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("holds token id 309, past the model's vocabulary of 250"),
              std::string::npos)
        << e.what();
  }
  try {
    data->source(inputs(2, 2), 1);  // every pair's source holds two words and [EOS]
    ADD_FAILURE() << "no pair fits 2 positions, and it was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("no sentence pair of " + testing::isolated_home() +
                                         "/corpus.txt fits 2 positions"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dlbench::data
