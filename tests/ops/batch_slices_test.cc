// How a convolution's batch is cut when its tensors pass cuDNN's 2^31 limits
// (engine/backend/batch_slices.h); the CUDA slices themselves run in the op harness's
// cuda/sliced variant.
#include "engine/backend/batch_slices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace dlbench::backend {
namespace {

using Sizes = std::vector<std::int64_t>;

TEST(BatchSlices, AWholeBatchUnderTheLimitIsOneSlice) {
  EXPECT_EQ(batch_slices(256, 1 << 20, std::size_t{1} << 31), Sizes{256});
  EXPECT_EQ(batch_slices(1, 100, 100), Sizes{1});
}

TEST(BatchSlices, SlicesAreEqualWithinOneSampleAndEachFits) {
  // ResNet-50's stem output in fp16: 64 x 112 x 112 x 2 bytes a sample; 1,337 fit in 2^31 - 1.
  const std::size_t sample = 64 * 112 * 112 * 2, limit = (std::size_t{1} << 31) - 1;
  EXPECT_EQ(batch_slices(1337, sample, limit), Sizes{1337});
  EXPECT_EQ(batch_slices(1338, sample, limit), (Sizes{669, 669}));
  EXPECT_EQ(batch_slices(1873, sample, limit), (Sizes{937, 936}));
  for (std::int64_t n : {1, 7, 100, 2674, 2675, 4000, 65536}) {
    const Sizes s = batch_slices(n, sample, limit);
    EXPECT_EQ(std::accumulate(s.begin(), s.end(), std::int64_t{0}), n) << n;
    const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
    EXPECT_LE(*hi - *lo, 1) << n;
    EXPECT_LE(static_cast<std::size_t>(*hi) * sample, limit) << n;
  }
}

TEST(BatchSlices, ASampleOverTheLimitIsASliceOfItsOwn) {
  EXPECT_EQ(batch_slices(3, 1000, 10), (Sizes{1, 1, 1}));
  EXPECT_EQ(batch_slices(2, 0, 10), Sizes{2});  // nothing to hold: one slice
}

TEST(BatchSlices, AnEmptyBatchHasNoSlices) {
  EXPECT_TRUE(batch_slices(0, 100, 1000).empty());
}

}  // namespace
}  // namespace dlbench::backend
