// `dlbench run` on cuda:0, end to end: what the text says about fp16's dynamic loss scaling
// matches the metrics the same run writes to its --json, and the precisions without loss
// scaling say nothing of it. Labelled gpu; skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

double metric(const json& result, const std::string& tag) {
  for (const json& m : result["metrics"])
    if (m["tag"] == tag) return m["value"].get<double>();
  ADD_FAILURE() << "no metric " << tag;
  return -1;
}

// A tiny ResNet-50 step (CIFAR input, batch 2) in `precision`: its text and its --json.
std::pair<testing::CommandResult, json> run_small(const std::string& precision) {
  const std::string path = "/tmp/dlbench-run-gpu-cli-" + std::to_string(getpid()) + ".json";
  auto r = testing::dlbench("run resnet50 --device cuda:0 --input 32 --batch 2 --precision " +
                            precision + " --warmup 1 --steps 2 --no-store --no-telemetry --json " +
                            path);
  json result;
  if (std::ifstream in(path); in) result = json::parse(in, nullptr, false);
  std::remove(path.c_str());
  return {r, result};
}

TEST(RunGpuCliTest, Fp16TrainingSaysWhatLossScalingDid) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  auto [r, result] = run_small("fp16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(result.is_object()) << "no --json result";
  const int skipped = static_cast<int>(metric(result, "loss_scaling/skipped_steps"));
  char scale[64];
  std::snprintf(scale, sizeof scale, "%.6g", metric(result, "loss_scaling/final_scale"));
  // One warm-up step and two measured ones.
  const std::string said =
      "dynamic: " + std::to_string(skipped) + (skipped == 1 ? " step" : " steps") +
      " of 3 skipped for non-finite gradients (warm-up included), scale " + scale + " at the end";
  EXPECT_NE(r.out.find("Loss scaling"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(said), std::string::npos) << "expected \"" << said << "\" in\n" << r.out;
}

TEST(RunGpuCliTest, Bf16TrainingHasNoLossScaling) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  auto [r, result] = run_small("bf16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Loss "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Loss scaling"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace dlbench
