#include "engine/data/token_documents.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>

#include "engine/core/error.h"

namespace dlbench::data {
namespace {

constexpr const char* kFormat =
    "one sentence per line as token ids separated by spaces, a blank line between documents";

// What a bad field looked like, printable and short: a binary file's bytes must not garble the
// terminal.
std::string shown(std::string_view field) {
  std::string out;
  for (char c : field.substr(0, 24)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return field.size() > 24 ? out + "..." : out;
}

}  // namespace

void append_token_ids(std::string_view text, const std::string& path, std::int64_t line,
                      const std::string& hint, std::vector<std::int32_t>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    const std::string_view field = text.substr(i, j - i);
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
    const bool number_field = end == field.data() + field.size() &&
                              (ec == std::errc() || ec == std::errc::result_out_of_range);
    if (ec != std::errc() || !number_field || id < 0 ||
        id > std::numeric_limits<std::int32_t>::max())
      throw Error(
          ErrorKind::kUsage,
          path + ":" + std::to_string(line) + ": '" + shown(field) + "' is " +
              (number_field && field[0] != '-' ? "too large for a token id (at most 2,147,483,647)"
                                               : "not a token id (a whole number from 0)"),
          hint);
    out.push_back(static_cast<std::int32_t>(id));
    i = j;
  }
}

TokenDocuments read_token_documents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kUsage, "cannot read the token file " + path,
                std::string("give a file of token ids: ") + kFormat);
  TokenDocuments docs;
  docs.path = path;
  std::string line;
  std::int64_t number = 0;
  const std::string hint = std::string("token files hold ") + kFormat +
                           " (text must be tokenized first, with the model's WordPiece vocabulary)";
  auto end_document = [&] {
    if (docs.sentence_count() > docs.documents.back())
      docs.documents.push_back(docs.sentence_count());
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
    const auto size_before = docs.tokens.size();
    append_token_ids(line, path, number, hint, docs.tokens);
    for (auto t = docs.tokens.begin() + static_cast<std::ptrdiff_t>(size_before);
         t != docs.tokens.end(); ++t)
      docs.largest_id = std::max(docs.largest_id, *t);
    if (docs.tokens.size() > size_before)
      docs.sentences.push_back(static_cast<std::int64_t>(docs.tokens.size()));
    else
      end_document();
  }
  if (in.bad())
    throw Error(ErrorKind::kUsage, "reading " + path + " failed",
                std::string("give a readable file (not a folder) of token ids: ") + kFormat);
  end_document();
  if (docs.tokens.empty())
    throw Error(ErrorKind::kUsage, path + " holds no token ids",
                std::string("give a file of token ids: ") + kFormat);
  return docs;
}

}  // namespace dlbench::data
