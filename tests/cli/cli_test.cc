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

TEST(CliTest, ErrorsAreOneLinePlusHint) {
  auto r = dlbench("bogus");
  EXPECT_EQ(r.exit_code, 2);
  int lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_LE(lines, 2) << r.err;
}

}  // namespace
}  // namespace dlbench
