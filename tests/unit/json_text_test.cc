// dump_json and valid_utf8 (engine/core/json_text.h): text that is not UTF-8 becomes U+FFFD
// instead of an exception; valid UTF-8 passes byte for byte.
#include "engine/core/json_text.h"

#include <gtest/gtest.h>

namespace dlbench {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TEST(JsonTextTest, InvalidBytesBecomeReplacementCharacters) {
  nlohmann::json doc = {{"file", "caf\xE9.txt"}, {"caf\xE9", {"\xFF\xFE", "ok"}}};
  std::string text = dump_json(doc);
  EXPECT_EQ(text, "{\"caf" + kReplacement + "\":[\"" + kReplacement + kReplacement +
                      "\",\"ok\"],\"file\":\"caf" + kReplacement + ".txt\"}");
  EXPECT_EQ(nlohmann::json::parse(text)["file"], "caf" + kReplacement + ".txt");
}

TEST(JsonTextTest, ValidUtf8IsWrittenAsItIs) {
  nlohmann::json doc = {{"name", "café ☕ \xF0\x9F\x9A\x80 \"q\"\n"}};
  EXPECT_EQ(dump_json(doc), "{\"name\":\"café ☕ \xF0\x9F\x9A\x80 \\\"q\\\"\\n\"}");
  EXPECT_EQ(dump_json({{"a", {1, "b"}}}, 2), "{\n  \"a\": [\n    1,\n    \"b\"\n  ]\n}");
}

TEST(JsonTextTest, ValidUtf8ReplacesWhatIsNotUtf8) {
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("café ☕"), "café ☕");
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf" + kReplacement);                 // Latin-1, at the end
  EXPECT_EQ(valid_utf8("caf\xE9."), "caf" + kReplacement + ".");          // the next byte survives
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kReplacement + kReplacement);         // overlong "/"
  EXPECT_EQ(valid_utf8("\xED\xA0\x80").find('\xED'), std::string::npos);  // a surrogate
  EXPECT_EQ(valid_utf8("\xE2\x82"), kReplacement);                        // truncated "€"
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
  EXPECT_EQ(valid_utf8(""), "");
}

}  // namespace
}  // namespace dlbench
