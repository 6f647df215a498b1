// Text into the HTML report (bench/report/html_text.h): escape_html for text and attributes,
// embedded_json for the JSON data block, and the whole report with hostile names in it.
#include "bench/report/html_text.h"

#include <gtest/gtest.h>

#include <sstream>

#include "bench/report/html_report.h"
#include "engine/core/json_text.h"
#include "tests/store/store_test_util.h"

namespace dlbench::report {
namespace {

using nlohmann::json;

// Names a user (or a hostile suite file) can store, and that a report then shows.
const std::vector<std::string> kHostile = {"<!--<script>", "</script><script>alert(1)</script>",
                                           "&amp;\"'", "caf\xE9",
                                           "a\xE2\x80\xA8"
                                           "b\xE2\x80\xA9"};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlTextTest, EscapeHtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(escape_html("<!--<script>"), "&lt;!--&lt;script&gt;");
  EXPECT_EQ(escape_html("&amp;\"'"), "&amp;amp;&quot;&#39;");
  EXPECT_EQ(escape_html("resnet50 b128"), "resnet50 b128");
  EXPECT_EQ(escape_html("café"), "café");
  EXPECT_EQ(escape_html("caf\xE9<"), "caf\xEF\xBF\xBD&lt;");  // Latin-1: U+FFFD, as in JSON
}

TEST(HtmlTextTest, EmbeddedJsonHasNoMarkupAndParsesBack) {
  json doc = json::array();
  for (const std::string& name : kHostile) doc.push_back({{name, name}, {"label", "x > y && z"}});
  std::string text = embedded_json(doc);
  for (const char* raw : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"})
    EXPECT_EQ(text.find(raw), std::string::npos) << raw << " in " << text;
  EXPECT_NE(text.find("\\u003c!--\\u003cscript\\u003e"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u0026amp;"), std::string::npos) << text;
  EXPECT_NE(text.find("a\\u2028b\\u2029"), std::string::npos) << text;
  // What JSON.parse sees: the same document, with U+FFFD for the Latin-1 byte.
  EXPECT_EQ(json::parse(text), json::parse(dump_json(doc)));
  EXPECT_EQ(json::parse(text)[0]["<!--<script>"], "<!--<script>");
  EXPECT_EQ(embedded_json(json::object()), "{}");
  EXPECT_EQ(embedded_json({{"s", "\\</"}}), "{\"s\":\"\\\\\\u003c/\"}");
}

// Every hostile name as a model, a host, a failed run's error and the report's title: the page
// keeps exactly its three scripts, no comment opens, and each name appears only escaped.
TEST(HtmlTextTest, ReportWithHostileNamesKeepsItsStructure) {
  ReportData data;
  data.title = "report of " + kHostile[0];
  data.source = kHostile[1];
  for (std::size_t i = 0; i < kHostile.size(); ++i) {
    store::RunRecord r = testing::sample_run(kHostile[i], 100.0 + i);
    r.id = std::int64_t(i) + 1;
    r.machine.id = 1;
    r.machine.hostname = kHostile[2];
    r.machine.description = kHostile[3];
    if (i % 2) {
      r.status = "failed";
      r.error = kHostile[(i + 1) % kHostile.size()];
    }
    data.runs.push_back(r);
  }
  data.machines = {data.runs[0].machine};
  std::ostringstream out;
  write_html(data, out);
  const std::string page = out.str();
  EXPECT_EQ(count(page, "<script"), 3u);
  EXPECT_EQ(count(page, "</script"), 3u);
  EXPECT_EQ(count(page, "<!--"), 0u);
  EXPECT_EQ(valid_utf8(page), page);
  EXPECT_NE(page.find("<td>&lt;!--&lt;script&gt;</td>"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("&amp;amp;&quot;&#39;"), std::string::npos);
}

}  // namespace
}  // namespace dlbench::report
