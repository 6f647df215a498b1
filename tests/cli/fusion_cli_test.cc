// --fusion/--no-fusion end to end: what the run says it fused, in the terminal and the JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

json run_vgg(const std::string& flags, std::string* text) {
  const std::string path = ::testing::TempDir() + "dlbench-fusion-test.json";
  std::remove(path.c_str());
  auto r = dlbench(
      "run vgg16 --device cpu --input 32 --batch 2 --steps 1 --warmup 0 --no-store "
      "--no-telemetry --json " +
      path + " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  *text = r.out;
  std::ifstream in(path);
  return json::parse(in);
}

TEST(FusionCliTest, VggRunsWithEveryReluFusedByDefault) {
  std::string text;
  const json doc = run_vgg("", &text);
  EXPECT_EQ(doc["config"]["fusion"], true);
  ASSERT_EQ(doc["passes"].size(), 2u) << doc["passes"];
  EXPECT_EQ(doc["passes"][0]["pass"], "fuse_matmul_relu");
  EXPECT_EQ(doc["passes"][0]["rewrites"], 2);
  EXPECT_EQ(doc["passes"][1]["pass"], "fuse_conv_relu");
  EXPECT_EQ(doc["passes"][1]["rewrites"], 13);
  EXPECT_NE(text.find("fuse_matmul_relu 2 rewrites, fuse_conv_relu 13 rewrites"), std::string::npos)
      << text;
}

TEST(FusionCliTest, NoFusionRunsTheGraphAsBuilt) {
  std::string text;
  const json doc = run_vgg("--no-fusion", &text);
  EXPECT_EQ(doc["config"]["fusion"], false);
  EXPECT_TRUE(doc["passes"].empty()) << doc["passes"];
  EXPECT_EQ(text.find("Graph passes"), std::string::npos) << text;
}

}  // namespace
}  // namespace dlbench
