// The command line end to end: the real binary, its exit codes and messages.
#include <gtest/gtest.h>

#include "tests/support/run_command.h"

namespace dlbench {
namespace {

using testing::dlbench;

TEST(CliTest, VersionPrintsVersionAndExitsZero) {
  auto r = dlbench("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("dlbench ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("git "), std::string::npos) << r.out;
}

TEST(CliTest, HelpListsSubcommandsWithDescriptions) {
  auto r = dlbench("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("info"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Describe this machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
}

TEST(CliTest, UnknownSubcommandExitsTwoWithHint) {
  auto r = dlbench("ifno");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dlbench: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'info'?"), std::string::npos) << r.err;
}

TEST(CliTest, UnknownFlagExitsTwoWithHint) {
  auto r = dlbench("info --jsno");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--jsno"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean '--json'?"), std::string::npos) << r.err;
}

TEST(CliTest, NonsenseGetsTheGeneralHint) {
  auto r = dlbench("--frobnicate-everything");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hint: see 'dlbench --help'"), std::string::npos) << r.err;
}

TEST(CliTest, NoSubcommandIsAUsageError) {
  auto r = dlbench("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no subcommand"), std::string::npos) << r.err;
}

// The hint draws from the subcommand the flag was typed in: `scale` has no --device, so the
// hint neither suggests '--device' (the flag typed, found among run's flags) nor any other
// subcommand's flag; it says which subcommands have it.
TEST(CliTest, DidYouMeanNeverSuggestsTheFlagThatWasTyped) {
  auto r = dlbench("scale resnet50 --device cpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("did you mean '--device'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: 'dlbench scale' has no --device (run, compare, micro allreduce, "
                       "micro gemm, micro bandwidth, micro transfer, maxbatch have it)"),
            std::string::npos)
      << r.err;
}

TEST(CliTest, DidYouMeanSuggestsOnlyTheSubcommandsOwnFlags) {
  auto r = dlbench("scale resnet50 --devcie cpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("'--device'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("see 'dlbench scale --help'"), std::string::npos) << r.err;
  auto typo = dlbench("run resnet50 --devcie cpu");
  EXPECT_NE(typo.err.find("did you mean '--device'? see 'dlbench run --help'"), std::string::npos)
      << typo.err;
}

// --help shows no CLI library internals: no {false} on a negated flag, no "=5" default on an
// option that is off unless given, no "TEXT=-"; and every subcommand names the global flags.
TEST(CliTest, HelpShowsNoLibraryLeftovers) {
  auto r = dlbench("run --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* leftover : {"{false}", "{true}", "INT=5", "TEXT=-", "=-", "[VALUE]"})
    EXPECT_EQ(r.out.find(leftover), std::string::npos) << leftover << "\n" << r.out;
  for (const char* shown : {"--telemetry, --no-telemetry", "--profile-layers [N]", "--json [FILE]",
                            "--graphs, --no-graphs", "--db DB", "-q, --quiet"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
  auto nested = dlbench("runs export --help");
  EXPECT_NE(nested.out.find("Global flags, before the subcommand"), std::string::npos)
      << nested.out;
  EXPECT_NE(nested.out.find("--db DB"), std::string::npos) << nested.out;
}

// The model list and the defaults in the help come from the registry: the built binary kept
// every model file's registration (whole-archive linking), and the test-only model is not there.
TEST(CliTest, HelpListsTheRegisteredModels) {
  auto r = dlbench("run --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* shown :
       {"Model: bert-base, bert-large, gnmt, ncf, resnet50, transformer, unet, unet3d, vgg16, "
        "word2vec",
        "bert-large 128 (default), 512, 384, 256, 64, 32 tokens",
        "ncf 256 train, 100 infer; resnet50 128 train, 64 infer", "224 (default), 32 pixels",
        "unet3d 2 train, 2 infer", "unet3d 128 (default), 96, 64, 32 voxels"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;
  EXPECT_EQ(r.out.find("registry-probe"), std::string::npos) << r.out;
}

// A volume model counts volumes and names its input's three sides.
TEST(CliTest, UNet3dRunsOnTheCpuInVolumes) {
  auto r = dlbench(
      "run unet3d --device cpu --input 32 --batch 1 --warmup 1 --steps 2 --no-store "
      "--no-telemetry");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("unet3d train fp32 on cpu, batch 1, input 32x32x32"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" volumes/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Parameters        31189443"), std::string::npos) << r.out;
}

// Engine errors say what to change in words and name the setting; the CLI adds the flag.
TEST(CliTest, EngineHintsGetTheirFlagFromTheCli) {
  auto oom = dlbench("run vgg16 --device cpu --input 32 --mode infer --batch 16777216 --no-store");
  EXPECT_EQ(oom.exit_code, 3) << oom.err;
  EXPECT_NE(oom.err.find("hint: use a smaller batch or free memory (--batch)\n"), std::string::npos)
      << oom.err;
  auto gpu = dlbench("run resnet50 --device cuda:63 --input 32 --batch 2 --no-store");
  EXPECT_EQ(gpu.exit_code, 3) << gpu.err;
  // "no GPU cuda:63 ... or use the CPU device" with the CUDA backend, "no CUDA backend" without.
  EXPECT_NE(gpu.err.find("use the CPU device (--device cpu)\n"), std::string::npos) << gpu.err;
}

TEST(CliTest, ErrorsAreOneLinePlusHint) {
  auto r = dlbench("bogus");
  EXPECT_EQ(r.exit_code, 2);
  int lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_LE(lines, 2) << r.err;
}

}  // namespace
}  // namespace dlbench
