#include "engine/core/suggest.h"

#include <gtest/gtest.h>

namespace dlbench::cli {
namespace {

TEST(SuggestTest, FindsTheClosestSubcommand) {
  std::vector<std::string> names{"info", "run", "suite", "--json", "--quiet"};
  EXPECT_EQ(closest_match("inf", names), "info");
  EXPECT_EQ(closest_match("ifno", names), "info");
  EXPECT_EQ(closest_match("--jsn", names), "--json");
  EXPECT_EQ(closest_match("suit", names), "suite");
}

TEST(SuggestTest, StaysQuietWhenNothingIsClose) {
  std::vector<std::string> names{"info", "run"};
  EXPECT_EQ(closest_match("benchmark", names), "");
  EXPECT_EQ(closest_match("x", {}), "");
}

}  // namespace
}  // namespace dlbench::cli
