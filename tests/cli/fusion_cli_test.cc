// --fusion/--no-fusion end to end: what the run says it fused, in the terminal and the JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

json run_model(const std::string& model, const std::string& flags, std::string* text) {
  // A file per test: ctest runs the tests of this file at once, as separate processes.
  const std::string path = ::testing::TempDir() + "dlbench-fusion-" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                           ".json";
  std::remove(path.c_str());
  auto r = dlbench(
      "run " + model +
      " --device cpu --input 32 --batch 2 --steps 1 --warmup 0 --no-store --no-telemetry --json " +
      path + " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  *text = r.out;
  std::ifstream in(path);
  return json::parse(in);
}

json run_vgg(const std::string& flags, std::string* text) {
  return run_model("vgg16", flags, text);
}

std::map<std::string, int> rewrites_of(const json& doc) {
  std::map<std::string, int> rewrites;
  for (const json& pass : doc["passes"]) rewrites[pass["pass"]] = pass["rewrites"];
  return rewrites;
}

TEST(FusionCliTest, VggRunsWithEveryReluFusedByDefault) {
  std::string text;
  const json doc = run_vgg("", &text);
  EXPECT_EQ(doc["config"]["fusion"], true);
  EXPECT_EQ(rewrites_of(doc), (std::map<std::string, int>{{"fuse_dual_bn_add_relu", 0},
                                                          {"fuse_bn_add_relu", 0},
                                                          {"fold_conv_bn", 0},
                                                          {"fuse_bn_relu", 0},
                                                          {"fuse_matmul_relu", 2},
                                                          {"fuse_feed_forward", 0},
                                                          {"fuse_conv_relu", 13},
                                                          {"fuse_conv_bn_stats", 0}}))
      << doc["passes"];
  EXPECT_NE(text.find("fuse_matmul_relu 2 rewrites, fuse_conv_relu 13 rewrites"), std::string::npos)
      << text;
}

// Inference folds every ResNet-50 batch norm into its convolution, the residual tails and the
// ReLUs becoming the convolutions' epilogues.
TEST(FusionCliTest, ResnetInferenceFoldsItsBatchNorms) {
  std::string text;
  const json doc = run_model("resnet50", "--mode infer", &text);
  EXPECT_EQ(rewrites_of(doc), (std::map<std::string, int>{{"fuse_dual_bn_add_relu", 0},
                                                          {"fuse_bn_add_relu", 16},
                                                          {"fold_conv_bn", 53},
                                                          {"fuse_bn_relu", 0},
                                                          {"fuse_matmul_relu", 0},
                                                          {"fuse_feed_forward", 0},
                                                          {"fuse_conv_relu", 33},
                                                          {"fuse_conv_bn_stats", 0}}))
      << doc["passes"];
  EXPECT_NE(text.find("fold_conv_bn 53 rewrites"), std::string::npos) << text;
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
