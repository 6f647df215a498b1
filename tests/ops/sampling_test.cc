// Negative sampling's statistics on the CPU backend (the op cases hold every backend to the same
// ids): NCF's items spread uniformly over their range, each call draws anew, the seed picks the
// stream, negatives cycle through the positives' users, and the door refuses a malformed batch
// without advancing the counter; Word2Vec's draws follow their table.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "tests/ops/host_tensor.h"

namespace dlbench::ops_test {
namespace {

// One CPU sampling batch: P positives, B rows.
struct Batch {
  Batch(std::int64_t positives, std::int64_t batch)
      : users_pos(static_cast<std::size_t>(positives)),
        items_pos(static_cast<std::size_t>(positives)),
        users(static_cast<std::size_t>(batch), -1),
        items(static_cast<std::size_t>(batch), -1),
        labels(static_cast<std::size_t>(batch), -1.0f) {
    for (std::size_t i = 0; i < users_pos.size(); ++i)
      users_pos[i] = static_cast<std::int32_t>(100 + i),
      items_pos[i] = static_cast<std::int32_t>(i);
  }
  void sample(backend::Backend& be, std::int64_t items_range, std::uint64_t seed) {
    be.sample_negatives({items_range, seed}, i32(&step, 1), i32(users_pos.data(), users_pos.size()),
                        i32(items_pos.data(), items_pos.size()), i32(users.data(), users.size()),
                        i32(items.data(), items.size()),
                        Tensor(labels.data(), {static_cast<std::int64_t>(labels.size()), 1},
                               DType::kF32, Device::cpu()));
  }
  static Tensor i32(std::int32_t* p, std::size_t n) {
    return Tensor(p, {static_cast<std::int64_t>(n)}, DType::kI32, Device::cpu());
  }
  std::int32_t step = 0;
  std::vector<std::int32_t> users_pos, items_pos, users, items;
  std::vector<float> labels;
};

TEST(SampleNegatives, ItemsAreUniformOverTheirRange) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  constexpr std::int64_t kItems = 50, kDraws = 100000;
  Batch b(1, kDraws + 1);
  b.sample(*be, kItems, 7);
  std::vector<double> counts(kItems, 0.0);
  for (std::size_t r = 1; r < b.items.size(); ++r) {
    ASSERT_GE(b.items[r], 0);
    ASSERT_LT(b.items[r], kItems);
    counts[static_cast<std::size_t>(b.items[r])] += 1;
  }
  // Pearson's chi-square against the uniform counts; 85.4 is the 0.1 % tail at 49 degrees of
  // freedom. The draw is deterministic, so this passes or fails the same way every run.
  const double expected = static_cast<double>(kDraws) / kItems;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 85.4);
  EXPECT_GT(chi2, 20.0);  // far too even is as wrong as too uneven (a counter, not a draw)
}

TEST(SampleNegatives, EachCallDrawsAnewFromTheSeedsStream) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  Batch a(4, 404), b(4, 404), c(4, 404);
  a.sample(*be, 3706, 1);
  const std::vector<std::int32_t> first = a.items;
  a.sample(*be, 3706, 1);
  b.sample(*be, 3706, 1), b.sample(*be, 3706, 1);
  c.sample(*be, 3706, 2), c.sample(*be, 3706, 2);
  EXPECT_EQ(a.step, 2);
  EXPECT_EQ(a.items, b.items);  // same seed, same step: the same draw
  EXPECT_NE(a.items, first);    // the next step draws other negatives
  EXPECT_NE(a.items, c.items);  // another seed, another stream
  for (std::size_t r = 0; r < a.items.size(); ++r) {
    const bool positive = r < a.users_pos.size();
    EXPECT_EQ(a.labels[r], positive ? 1.0f : 0.0f) << r;
    EXPECT_EQ(a.users[r], positive ? a.users_pos[r] : a.users_pos[(r - 4) % 4]) << r;
    if (positive) {
      EXPECT_EQ(a.items[r], a.items_pos[r]) << r;
    }
  }
}

TEST(SampleNegatives, MalformedBatchesAreRefusedBeforeTheCounterMoves) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  Batch more_positives_than_rows(5, 4);
  EXPECT_THROW(more_positives_than_rows.sample(*be, 10, 1), Error);
  EXPECT_EQ(more_positives_than_rows.step, 0);
  Batch no_items(2, 8);
  EXPECT_THROW(no_items.sample(*be, 0, 1), Error);
  EXPECT_EQ(no_items.step, 0);
  Batch ok(2, 8);
  std::vector<float> float_ids(2);
  EXPECT_THROW(be->sample_negatives({10, 1}, Batch::i32(&ok.step, 1),
                                    Tensor(float_ids.data(), {2}, DType::kF32, Device::cpu()),
                                    Batch::i32(ok.items_pos.data(), 2),
                                    Batch::i32(ok.users.data(), 8), Batch::i32(ok.items.data(), 8),
                                    Tensor(ok.labels.data(), {8, 1}, DType::kF32, Device::cpu())),
               Error);
  EXPECT_EQ(ok.step, 0);
}

// Word2Vec's candidates follow their table: weights 4, 0, 1, 3, 2 (out of 10), 50,000 draws.
TEST(SampleCandidates, DrawsFollowTheTableAndContextsComeFirst) {
  std::unique_ptr<backend::Backend> be = backend::make_backend(Device::cpu());
  constexpr std::int64_t kPairs = 1000, kColumns = 51;
  std::vector<float> cdf = {0.4f, 0.4f, 0.5f, 0.8f, 1.0f};
  std::vector<std::int32_t> contexts(kPairs, 3), ids(kPairs * kColumns, -1);
  std::vector<float> labels(kPairs * kColumns, -1.0f);
  std::int32_t step = 0;
  be->sample_candidates({11}, Batch::i32(&step, 1), Batch::i32(contexts.data(), kPairs),
                        Tensor(cdf.data(), {5}, DType::kF32, Device::cpu()),
                        Tensor(ids.data(), {kPairs, kColumns}, DType::kI32, Device::cpu()),
                        Tensor(labels.data(), {kPairs, kColumns}, DType::kF32, Device::cpu()));
  EXPECT_EQ(step, 1);
  std::vector<double> counts(5, 0.0);
  for (std::int64_t e = 0; e < kPairs * kColumns; ++e) {
    const bool context = e % kColumns == 0;
    EXPECT_EQ(labels[static_cast<std::size_t>(e)], context ? 1.0f : 0.0f);
    if (context)
      EXPECT_EQ(ids[static_cast<std::size_t>(e)], 3);
    else
      counts[static_cast<std::size_t>(ids[static_cast<std::size_t>(e)])] += 1;
  }
  EXPECT_EQ(counts[1], 0.0);  // weight 0: never drawn
  const double draws = kPairs * (kColumns - 1);
  const double share[] = {0.4, 0.0, 0.1, 0.3, 0.2};
  double chi2 = 0;
  for (int v : {0, 2, 3, 4}) {
    const double expected = draws * share[v];
    chi2 += (counts[static_cast<std::size_t>(v)] - expected) *
            (counts[static_cast<std::size_t>(v)] - expected) / expected;
  }
  EXPECT_LT(chi2, 16.3);  // the 0.1 % tail at 3 degrees of freedom
}

}  // namespace
}  // namespace dlbench::ops_test
