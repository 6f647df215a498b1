// dlbench run --profile-layers end to end on the CPU: the per-layer table, the rollup by kind
// and the top layers are printed; --json carries the profile; the flag's default is 5 steps;
// bad values get a one-line error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using nlohmann::json;
using testing::dlbench;

// --no-store: the tests must not write into the user's results database.
const std::string kTiny =
    "run resnet50 --device cpu --input 32 --batch 2 --steps 1 --warmup 1 --no-store "
    "--no-telemetry";

TEST(ProfileCliTest, PrintsEveryLayerTheKindsAndTheTopLayers) {
  auto r = dlbench(kTiny + " --profile-layers 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"Per-layer time, mean of 1 extra step after the measured ones", "host steady clock",
        "forward ms", "backward ms", "layer4.2.conv3", "fc", "loss", "update",
        "between backward and update", "step, first mark to last", "Time by kind", "conv2d",
        "batch_norm", "Top 10 layers by time"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  EXPECT_NE(r.err.find("profile step 1"), std::string::npos) << r.err;
}

TEST(ProfileCliTest, InferenceTableHasNoBackwardColumn) {
  auto r = dlbench(kTiny + " --mode infer --profile-layers 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Per-layer time"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("backward ms"), std::string::npos) << r.out;
}

TEST(ProfileCliTest, JsonCarriesTheProfileAndTheDefaultIsFiveSteps) {
  auto r = dlbench(kTiny + " --profile-layers --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  const json& p = doc["layer_profile"];
  ASSERT_TRUE(p.is_object()) << r.out.substr(0, 2000);
  EXPECT_EQ(p["steps"], 5);
  EXPECT_EQ(doc["measured_steps"], 1) << "profiled steps are not measured steps";
  EXPECT_GT(p["step_ms"].get<double>(), 0.0);
  EXPECT_GT(p["layers"].size(), 100u);
  double shares = 0;
  for (const json& k : p["kinds"]) shares += k["share"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-6);
  for (const json& l : p["layers"]) {
    EXPECT_GE(l["forward_ms"].get<double>(), 0.0) << l;
    EXPECT_GE(l["backward_ms"].get<double>(), 0.0) << l;
  }
}

TEST(ProfileCliTest, WithoutTheFlagThereIsNoProfile) {
  auto r = dlbench(kTiny + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out).contains("layer_profile"));
}

TEST(ProfileCliTest, BadValuesAreUsageErrors) {
  auto negative = dlbench(kTiny + " --profile-layers -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
  EXPECT_NE(negative.err.find("--profile-layers must be from 0 to"), std::string::npos)
      << negative.err;
  auto peer = dlbench(kTiny + " --profile-layers 2 --framework pytorch");
  EXPECT_EQ(peer.exit_code, 2) << peer.err;
  EXPECT_NE(peer.err.find("--profile-layers times dlbench's own engine"), std::string::npos)
      << peer.err;
}

}  // namespace
}  // namespace dlbench
