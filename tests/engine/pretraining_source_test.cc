// BERT's real data: a tokenized corpus (a sentence of ids per line, documents between blank
// lines) read with bad files refused by file and line, and made into pretraining sequences as
// create_pretraining_data.py makes them: A and B are the document's consecutive sentences, or B
// comes from another document (the next-sentence label then says 1), the pair fits the
// sequence, and the masking is the synthetic batches'.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/pretraining_source.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"
#include "tests/support/data_file.h"

namespace dlbench::data {
namespace {

using testing::usage_refusal;
using testing::write_data_file;

constexpr std::int64_t kVocabulary = 2000;

// Document d's sentences are runs of ids d * 100 + 1000 + k, k counting on through the
// document, so a row's tokens say which document they came from and whether they follow on.
std::string corpus(int documents, int sentences, int words) {
  std::string text;
  for (int d = 0; d < documents; ++d) {
    int k = 0;
    for (int s = 0; s < sentences; ++s) {
      for (int w = 0; w < words; ++w) text += std::to_string(1000 + d * 100 + k++) + " ";
      text += "\n";
    }
    text += "\n";
  }
  return text;
}

TEST(TokenDocumentsTest, SentencesPerLineAndDocumentsBetweenBlankLines) {
  const TokenDocuments d =
      read_token_documents(write_data_file("docs.txt", "\n101 7\t8\r\n9\n\n\n  \n3 4 5\n"));
  EXPECT_EQ(d.tokens, (std::vector<std::int32_t>{101, 7, 8, 9, 3, 4, 5}));
  EXPECT_EQ(d.sentences, (std::vector<std::int64_t>{0, 3, 4, 7}));
  EXPECT_EQ(d.documents, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(d.largest_id, 101);
  EXPECT_EQ(d.sentence(1).size(), 1u);
}

TEST(TokenDocumentsTest, WhatIsNotATokenIdIsRefusedByLine) {
  auto read = [](const std::string& path) { read_token_documents(path); };
  EXPECT_NE(usage_refusal("words.txt", "1 2\nthe cat\n", read).find("words.txt:2: 'the'"),
            std::string::npos);
  EXPECT_NE(usage_refusal("negative.txt", "1 -2\n", read).find(":1: '-2'"), std::string::npos);
  EXPECT_NE(usage_refusal("huge.txt", "99999999999\n", read).find("'99999999999' is too large"),
            std::string::npos);
  // A zip's bytes are shown as ? rather than written to the terminal.
  EXPECT_NE(usage_refusal("zipped.txt", std::string("PK\x03\x04\x01", 5), read).find("'PK???"),
            std::string::npos);
  EXPECT_NE(usage_refusal("empty.txt", "\n \n", read).find("holds no token ids"),
            std::string::npos);
  EXPECT_THROW(read_token_documents("/nonexistent/tokens.txt"), Error);
}

std::vector<InputSpec> inputs(std::int64_t batch, std::int64_t sequence) {
  std::vector<InputSpec> specs;
  for (PretrainingField f :
       {PretrainingField::kIds, PretrainingField::kSegments, PretrainingField::kMaskedLabels,
        PretrainingField::kLengths, PretrainingField::kNextSentence}) {
    const bool per_sequence =
        f == PretrainingField::kLengths || f == PretrainingField::kNextSentence;
    specs.push_back({to_string(f),
                     {per_sequence ? batch : batch * sequence},
                     DType::kI32,
                     pretraining(f, kVocabulary, sequence, 4),
                     ""});
  }
  return specs;
}

struct Batch {
  std::vector<std::int32_t> ids, segments, labels, lengths, next;
};

Batch next_batch(DataSource& source, backend::Backend& be, std::int64_t batch,
                 std::int64_t sequence) {
  Batch b{std::vector<std::int32_t>(batch * sequence), std::vector<std::int32_t>(batch * sequence),
          std::vector<std::int32_t>(batch * sequence), std::vector<std::int32_t>(batch),
          std::vector<std::int32_t>(batch)};
  std::vector<Buffer> buffers;
  buffers.reserve(5);
  std::vector<Tensor> tensors;
  for (auto* host : {&b.ids, &b.segments, &b.labels, &b.lengths, &b.next}) {
    buffers.emplace_back(be.allocator(), host->size() * sizeof(std::int32_t));
    tensors.emplace_back(buffers.back().data(), Shape{static_cast<std::int64_t>(host->size())},
                         DType::kI32, be.device());
  }
  source.fill(be, tensors);
  be.to_host(tensors[0], b.ids.data());
  be.to_host(tensors[1], b.segments.data());
  be.to_host(tensors[2], b.labels.data());
  be.to_host(tensors[3], b.lengths.data());
  be.to_host(tensors[4], b.next.data());
  return b;
}

TEST(PretrainingSourceTest, SequencesFollowTheDocumentOrComeFromAnother) {
  auto be = backend::make_backend(Device::cpu());
  const auto data = read_pretraining_data(write_data_file("corpus.txt", corpus(6, 12, 3)));
  EXPECT_EQ(data->describe(), "token documents " + testing::isolated_home() +
                                  "/corpus.txt: 6 documents, 72 sentences, 216 tokens");
  constexpr std::int64_t kBatch = 64, kSeq = 16;
  auto source = data->source(inputs(kBatch, kSeq), 5);
  int random = 0;
  for (int step = 0; step < 3; ++step) {
    const Batch b = next_batch(*source, *be, kBatch, kSeq);
    for (std::int64_t n = 0; n < kBatch; ++n) {
      const std::int64_t length = b.lengths[n];
      ASSERT_GE(length, 5);
      ASSERT_LE(length, kSeq);
      const std::int32_t* ids = b.ids.data() + n * kSeq;
      const std::int32_t* labels = b.labels.data() + n * kSeq;
      ASSERT_EQ(ids[0], 101);
      ASSERT_EQ(ids[length - 1], 102);
      // The words as they were before masking; the first [SEP] splits A from B.
      std::vector<std::int32_t> a, words_b;
      bool in_b = false;
      for (std::int64_t i = 1; i < length - 1; ++i) {
        const std::int32_t word = labels[i] >= 0 ? labels[i] : ids[i];
        if (word == 102 && !in_b) {
          in_b = true;
          continue;
        }
        EXPECT_EQ(b.segments[n * kSeq + i], in_b ? 1 : 0);
        (in_b ? words_b : a).push_back(word);
      }
      ASSERT_TRUE(in_b && !a.empty() && !words_b.empty());
      for (std::int64_t i = length; i < kSeq; ++i) EXPECT_EQ(ids[i], 0);
      // Each segment is consecutive words of one document.
      for (const auto* segment : {&a, &words_b})
        for (std::size_t k = 1; k < segment->size(); ++k)
          EXPECT_EQ((*segment)[k], (*segment)[k - 1] + 1) << "row " << n;
      const bool same_document = (a.front() - 1000) / 100 == (words_b.front() - 1000) / 100;
      if (b.next[n] == 0) {
        EXPECT_TRUE(same_document) << "row " << n;
        // B follows A unless a cut at A's end or B's start came between them.
        EXPECT_GT(words_b.front(), a.back()) << "row " << n;
      } else {
        EXPECT_FALSE(same_document) << "row " << n;
        ++random;
      }
    }
  }
  // Half at random, plus the pairs a one-sentence gathering forces: 96 expected of 192.
  EXPECT_GT(random, 96 - 30);
  EXPECT_LT(random, 96 + 40);
  ASSERT_TRUE(source->read_count().has_value());
  EXPECT_EQ(source->read_count()->unit, "tokens");
  EXPECT_GT(source->read_count()->count, 192 * 3);
}

TEST(PretrainingSourceTest, TheSameSeedMakesTheSameBatches) {
  auto be = backend::make_backend(Device::cpu());
  const auto data = read_pretraining_data(write_data_file("seeded.txt", corpus(4, 5, 7)));
  auto first = data->source(inputs(8, 32), 9), again = data->source(inputs(8, 32), 9),
       other = data->source(inputs(8, 32), 10);
  const Batch a = next_batch(*first, *be, 8, 32), b = next_batch(*again, *be, 8, 32);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.segments, b.segments);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.lengths, b.lengths);
  EXPECT_EQ(a.next, b.next);
  EXPECT_NE(a.ids, next_batch(*other, *be, 8, 32).ids);
}

// A text with no sentence breaks (one line of 20,000 ids) and a corpus of one document: rows are
// still made, fast, of windows of the line; every B is random (no sentence follows another) and
// comes from the one document there is.
TEST(PretrainingSourceTest, ALongLineAndASingleDocumentStillMakeRows) {
  auto be = backend::make_backend(Device::cpu());
  std::string line;
  for (int k = 0; k < 20000; ++k) line += std::to_string(1000 + k % 900) + " ";
  const auto data = read_pretraining_data(write_data_file("one_line.txt", line + "\n"));
  auto source = data->source(inputs(16, 32), 4);
  for (int step = 0; step < 4; ++step) {
    const Batch b = next_batch(*source, *be, 16, 32);
    for (std::int64_t n = 0; n < 16; ++n) {
      EXPECT_GE(b.lengths[n], 5);
      EXPECT_LE(b.lengths[n], 32);
      EXPECT_EQ(b.next[n], 1) << "row " << n;
    }
  }
  // Windows of at most 29 tokens each for A, not the line's 20,000.
  EXPECT_LE(source->read_count()->count, 4 * 16 * 29);
}

TEST(PretrainingSourceTest, IdsPastTheVocabularyAreAUsageError) {
  const auto data = read_pretraining_data(write_data_file("big_ids.txt", "5 6\n7 2500\n"));
  try {
    data->source(inputs(2, 16), 1);
    FAIL() << "ids past the vocabulary were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("token id 2500, past the model's vocabulary of 2,000"),
              std::string::npos)
        << e.what();
  }
}

// A tiny BERT (full depth, 1/16 of the width) trains on sequences made from a file: the model
// reads the format, and its loss falls under half of the first step's on a corpus of 10 words.
TEST(PretrainingSourceTest, ATinyBertTrainsOnATokenFile) {
  std::string text;
  for (int d = 0; d < 5; ++d) {
    for (int s = 0; s < 20; ++s) {
      for (int w = 0; w < 6; ++w) text += std::to_string(1000 + (d + s + w) % 10) + " ";
      text += "\n";
    }
    text += "\n";
  }
  auto be = backend::make_backend(Device::cpu());
  const models::ModelSpec& spec = models::find_model("bert-base");
  models::ModelConfig mc;
  mc.batch = 8, mc.size = 32, mc.width_divisor = 16;
  mc.data = models::read_data(spec, write_data_file("bert.txt", text));
  mc = models::resolve(spec, mc);
  nn::TrainerConfig tc;
  tc.optimizer = spec.default_optimizer;
  tc.optimizer.learning_rate = 2e-3f;
  nn::Trainer net(spec.build(mc), *be, tc);
  auto source = mc.data->source(net.graph().input_specs(), 3);
  float first = 0, last = 0;
  int step = 0;
  for (; step < 60 && (step < 2 || last > 0.5f * first); ++step) {
    source->fill(*be, net.inputs());
    net.train_step();
    (step == 0 ? first : last) = net.loss();
    ASSERT_TRUE(std::isfinite(net.loss())) << "step " << step;
  }
  std::printf("tiny bert on a token file: loss %.3f -> %.3f in %d steps\n", first, last, step);
  EXPECT_LT(last, 0.5f * first);
}

}  // namespace
}  // namespace dlbench::data
