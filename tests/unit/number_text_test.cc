// Numbers in the terminal's words: counts agree with their nouns, and small values keep their
// significant digits (a loss near 1e-5 printed with four decimals read "0.0000 -> 0.0000").
#include "cli/number_text.h"

#include <gtest/gtest.h>

namespace dlbench::cli {
namespace {

TEST(NumberTextTest, CountsAgreeWithTheirNouns) {
  EXPECT_EQ(count_text(1, "step"), "1 step");
  EXPECT_EQ(count_text(0, "step"), "0 steps");
  EXPECT_EQ(count_text(3, "GPU"), "3 GPUs");
  EXPECT_EQ(count_text(1, "run"), "1 run");
  EXPECT_EQ(count_text(2, "replica", "replicas"), "2 replicas");
}

TEST(NumberTextTest, SmallLossesKeepTheirDigits) {
  EXPECT_EQ(significant(1.2345e-5, 5), "1.2345e-05");
  EXPECT_EQ(significant(9.87e-6, 5), "9.87e-06");
  EXPECT_EQ(significant(1.30641, 5), "1.3064");
  EXPECT_EQ(significant(0.8725, 5), "0.8725");
}

}  // namespace
}  // namespace dlbench::cli
