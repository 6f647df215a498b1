// The checks on a suite file's text before TOML parses it: encoding, and a nesting depth
// counted across dotted keys, headers, arrays and inline tables, strings and comments aside.
#include "bench/suite/suite_text.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"

namespace dlbench::suite {
namespace {

std::string refusal(const std::string& text) {
  try {
    check_suite_text("s.toml", text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

std::string dotted(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

TEST(SuiteTextTest, DepthLimitCountsDottedKeysAtTheLimit) {
  EXPECT_EQ(refusal(dotted(kMaxSuiteDepth) + " = 1\n"), "");
  EXPECT_EQ(refusal("\n" + dotted(kMaxSuiteDepth + 1) + " = 1\n"),
            "s.toml:2: nested more than 64 levels deep (dotted keys, table headers, arrays and "
            "inline tables together)");
}

TEST(SuiteTextTest, HeaderDepthAddsToTheKeysBelowIt) {
  const std::string header = "[" + dotted(40) + "]\n";
  EXPECT_EQ(refusal(header + dotted(20) + " = 1\n"), "");
  EXPECT_NE(refusal(header + "x = 1\n" + dotted(30) + " = 1\n").find("s.toml:3: nested"),
            std::string::npos);
  // A new header starts over.
  EXPECT_EQ(refusal(header + "[b]\n" + dotted(60) + " = 1\n"), "");
}

TEST(SuiteTextTest, ClosedBracketsGiveTheirLevelsBack) {
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "[[1], {a.b = 2}], ";
  EXPECT_EQ(refusal("x = [" + many + "]\n"), "");
  EXPECT_NE(refusal("x = [\n\n" + std::string(70, '[')).find("s.toml:3:"), std::string::npos);
}

TEST(SuiteTextTest, StringsAndCommentsDoNotCount) {
  const std::string deep(200, '[');
  EXPECT_EQ(refusal("a = \"" + deep + "\\\"" + deep + "\" # " + deep + "\n"), "");
  EXPECT_EQ(refusal("a = '" + dotted(100) + "'\n\"" + dotted(100) + "\" = 1\n"), "");
  EXPECT_EQ(refusal("a = \"\"\"\n" + deep + "\n\"\"\"\nb = '''" + deep + "\n'''\n"), "");
  // Lines inside a multi-line string still count for the line number after it.
  EXPECT_NE(refusal("a = \"\"\"\n\n\"\"\"\n" + dotted(65) + " = 1").find("s.toml:4:"),
            std::string::npos);
}

TEST(SuiteTextTest, EncodingIsUtf8WithoutNul) {
  EXPECT_EQ(refusal("name = \"caf\xc3\xa9 \xf0\x9f\x9a\x80\"\n"), "");
  EXPECT_EQ(refusal("x = 1\nname = \"caf\xe9\"\n"), "s.toml:2: not UTF-8 (byte 0xe9 in column 12)");
  EXPECT_NE(refusal("\xc0\xaf").find("not UTF-8 (byte 0xc0"), std::string::npos);  // overlong
  EXPECT_NE(refusal("\xed\xa0\x80").find("not UTF-8"), std::string::npos);         // surrogate
  EXPECT_NE(refusal("\xf4\x90\x80\x80").find("not UTF-8"), std::string::npos);     // > U+10FFFF
  EXPECT_NE(refusal("\xe2\x82").find("not UTF-8"), std::string::npos);             // cut short
  EXPECT_EQ(refusal(std::string("a = 1\n\0", 7)), "s.toml:2: a NUL byte in column 1");
}

}  // namespace
}  // namespace dlbench::suite
