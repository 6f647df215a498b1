// Every JSON document dlbench writes is made text by dump_json, the one place where text that
// came from outside (command arguments, file paths, suite and model names, error texts,
// environment values, whatever the database gives back) is made valid UTF-8. Such text may hold
// bytes that are not UTF-8 (a Latin-1 file name, say), and nlohmann's plain dump() throws on
// them (type_error.316) after the work is done, leaving the output empty and the command's own
// exit code lost. Here each invalid byte sequence becomes U+FFFD instead, as a browser decodes
// it; the rest of the text is written byte for byte (valid UTF-8 is not escaped).
// The test JsonText.EveryWriterUsesDumpJson fails when a raw dump() call appears elsewhere.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dlbench {

// indent < 0: one line; otherwise pretty-printed with that many spaces per level.
inline std::string dump_json(const nlohmann::json& doc, int indent = -1) {
  return doc.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// The text with invalid UTF-8 replaced exactly as dump_json replaces it, for text that leaves
// dlbench outside a JSON document (HTML text, say).
inline std::string valid_utf8(std::string_view text) {
  bool ascii = true;
  for (char c : text) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);
  return nlohmann::json::parse(dump_json(nlohmann::json(std::string(text)))).get<std::string>();
}

}  // namespace dlbench
