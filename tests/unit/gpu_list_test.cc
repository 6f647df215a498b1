// The --gpus flag: GPU counts for dlbench scale, and more GPUs than present.
#include <gtest/gtest.h>

#include "cli/gpu_list.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

TEST(GpuListTest, ParsesIncreasingGpuCounts) {
  EXPECT_EQ(parse_gpu_counts("1,2,4,8"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(parse_gpu_counts("2"), (std::vector<int>{2}));
}

TEST(GpuListTest, RejectsBadGpuCountsAsUsageErrors) {
  for (const char* bad : {"", "0", "2,1", "1,,2", "two", "1,2x", "-1"}) {
    try {
      parse_gpu_counts(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
    }
  }
}

TEST(GpuListTest, MoreGpusThanPresentIsAResourceError) {
  try {
    parse_gpus("4096");
    FAIL() << "accepted 4096 GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
  }
}

}  // namespace
}  // namespace dlbench::cli
