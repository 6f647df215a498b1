// Text into the HTML report. Everything the report shows comes from the database, so every
// name in it (a model, a suite, a host, an error text) may be written by a hostile or careless
// hand: `<!--<script>` as a model name, raw inside the page's JSON data block, would swallow
// the page's other scripts by the HTML parsing rules and no chart would draw. So user text
// reaches the page only through these two functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dlbench::report {

// For text nodes and attribute values: valid UTF-8 (see engine/core/json_text.h) with & < > "
// and ' as character references.
std::string escape_html(std::string_view text);

// A JSON document to embed in <script type="application/json">: dump_json's text with < > &
// written as \u003c \u003e \u0026, so no "</script", "<!--" or "-->" can appear, and U+2028 and
// U+2029 as \u2028 \u2029 (line terminators to older JavaScript parsers). JSON.parse of the
// element's text gives the document back unchanged.
std::string embedded_json(const nlohmann::json& doc);

}  // namespace dlbench::report
