#include "engine/data/text_corpus.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "engine/core/error.h"

namespace dlbench::data {
namespace {

const char* const kWhat = "plain text: words are runs of letters, as in text8";

// Archives a user may hand over as they were downloaded (text8 comes as text8.zip).
const char* compressed_kind(std::string_view head) {
  struct Magic {
    std::string_view bytes;
    const char* kind;
  };
  static const Magic kMagic[] = {{"\x1f\x8b", "gzip"},
                                 {"PK\x03\x04", "zip"},
                                 {"BZh", "bzip2"},
                                 {std::string_view("\xfd"
                                                   "7zXZ\0",
                                                   6),
                                  "xz"},
                                 {"\x28\xb5\x2f\xfd", "zstd"}};
  for (const Magic& m : kMagic)
    if (head.substr(0, m.bytes.size()) == m.bytes) return m.kind;
  return nullptr;
}

[[noreturn]] void not_text(const std::string& path, std::int64_t line, const std::string& problem) {
  throw Error(ErrorKind::kUsage, path + ":" + std::to_string(line) + ": " + problem,
              std::string("word2vec reads ") + kWhat);
}

// Which characters beyond ASCII are part of words: every letter of every script is, so a
// Cyrillic or Greek text reads as words too; what separates them is punctuation, symbols and
// spaces: Latin-1's (U+0080 to U+00BF, the signs x and /), the general punctuation, symbol and
// arrow blocks (U+2000 to U+2BFF, U+2E00 to U+2E7F), CJK punctuation (U+3000 to U+303F), the
// byte-order mark, full-width punctuation and the emoji planes.
bool word_character(unsigned code) {
  struct Range {
    unsigned first, last;
  };
  static constexpr Range kSeparators[] = {
      {0x80, 0xBF},     {0xD7, 0xD7},     {0xF7, 0xF7},      {0x2000, 0x2BFF}, {0x2E00, 0x2E7F},
      {0x3000, 0x303F}, {0xFE30, 0xFE6F}, {0xFEFF, 0xFEFF},  {0xFF00, 0xFF0F}, {0xFF1A, 0xFF20},
      {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65}, {0x1F000, 0x1FAFF}};
  for (const Range& r : kSeparators)
    if (code >= r.first && code <= r.last) return false;
  return true;
}

// Latin-1's capitals (U+00C0 to U+00DE but x) in lower case, as ASCII's; other scripts' letters
// stay as written.
unsigned lower_case(unsigned code) {
  return code >= 0xC0 && code <= 0xDE && code != 0xD7 ? code + 0x20 : code;
}

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Splits the text into words and calls `word` on each, checking as it goes that it is text.
template <class OnWord>
void split_words(const std::string& path, std::string_view text, OnWord&& word) {
  std::string current;
  std::int64_t line = 1;
  auto flush = [&] {
    if (!current.empty()) word(current), current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        current += static_cast<char>(c | 0x20);
        continue;
      }
      flush();
      if (c == '\n') ++line;
      if ((c < 0x20 && (c < '\t' || c > '\r')) || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        not_text(path, line, std::string("control byte ") + hex + "; this is not a text file");
      }
      continue;
    }
    // A UTF-8 sequence: its lead byte says how many continuation bytes follow.
    const int more = c >= 0xF0 && c <= 0xF4   ? 3
                     : c >= 0xE0 && c <= 0xEF ? 2
                     : c >= 0xC2 && c <= 0xDF ? 1
                                              : -1;
    bool valid = more > 0 && i + static_cast<std::size_t>(more) < text.size();
    unsigned code = valid ? c & (0x3Fu >> more) : 0;
    for (int k = 1; valid && k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3Fu);
    }
    // The shortest form only, no surrogates, nothing past U+10FFFF (Unicode's table 3-7).
    constexpr unsigned kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (valid)
      valid = code >= kSmallest[more] && (code < 0xD800 || code > 0xDFFF) && code <= 0x10FFFF;
    if (!valid)
      not_text(path, line,
               "bytes that are not UTF-8 text (a Latin-1 file? iconv -f latin1 -t utf-8 "
               "converts it)");
    if (word_character(code)) {
      append_utf8(current, lower_case(code));
    } else {
      flush();
    }
    i += static_cast<std::size_t>(more);
  }
  flush();
}

}  // namespace

Corpus read_text_corpus(const std::string& path, int min_count) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kUsage, "cannot read the text file " + path,
                std::string("give the path of a text corpus (") + kWhat + ")");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorKind::kUsage, "reading " + path + " failed");
  if (const char* kind = compressed_kind(text))
    throw Error(ErrorKind::kUsage, path + " is a " + std::string(kind) + " archive, not text",
                "decompress it first (text8 comes as text8.zip: unzip it and give the file text8)");

  // Words by first appearance, then the text as those provisional ids.
  std::unordered_map<std::string, std::int32_t> first_seen;
  std::vector<std::string> seen;
  std::vector<std::int64_t> seen_counts;
  std::vector<std::int32_t> provisional;
  split_words(path, text, [&](const std::string& w) {
    // Looked up first: a key is copied only for a word not seen before.
    auto it = first_seen.find(w);
    if (it == first_seen.end()) {
      it = first_seen.emplace(w, static_cast<std::int32_t>(seen.size())).first;
      seen.push_back(w), seen_counts.push_back(0);
    }
    ++seen_counts[static_cast<std::size_t>(it->second)];
    provisional.push_back(it->second);
  });

  std::vector<std::int32_t> order(seen.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    const auto sa = static_cast<std::size_t>(a), sb = static_cast<std::size_t>(b);
    return seen_counts[sa] != seen_counts[sb] ? seen_counts[sa] > seen_counts[sb]
                                              : seen[sa] < seen[sb];
  });
  Corpus corpus;
  corpus.path = path;
  corpus.word_count = static_cast<std::int64_t>(provisional.size());
  corpus.min_count = min_count;
  std::vector<std::int32_t> id_of(seen.size(), -1);
  for (std::int32_t s : order) {
    const auto ss = static_cast<std::size_t>(s);
    if (seen_counts[ss] < min_count) break;
    id_of[ss] = static_cast<std::int32_t>(corpus.vocabulary.size());
    corpus.vocabulary.push_back(std::move(seen[ss]));
    corpus.counts.push_back(seen_counts[ss]);
  }
  if (corpus.vocabulary.size() < 2)
    throw Error(ErrorKind::kUsage,
                path + " holds " + std::to_string(corpus.vocabulary.size()) + " word(s) seen " +
                    std::to_string(min_count) + " times or more; Word2Vec needs at least two",
                std::string("give a longer text (") + kWhat + ")");
  corpus.tokens.reserve(provisional.size());
  for (std::int32_t p : provisional)
    if (const std::int32_t id = id_of[static_cast<std::size_t>(p)]; id >= 0)
      corpus.tokens.push_back(id);
  return corpus;
}

}  // namespace dlbench::data
