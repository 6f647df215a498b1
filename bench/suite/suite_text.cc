#include "bench/suite/suite_text.h"

#include <cstdio>
#include <fstream>
#include <vector>

#include "engine/core/error.h"

namespace dlbench::suite {
namespace {

[[noreturn]] void refuse(const std::string& file, int line, const std::string& what,
                         const std::string& hint) {
  throw Error(ErrorKind::kUsage, file + ":" + std::to_string(line) + ": " + what, hint);
}

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF included, as RFC 3629 says).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return k < text.size() ? (unsigned char)text[k] : 0u; };
  auto continuation = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  const unsigned b0 = byte(i), b1 = byte(i + 1);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const bool second_ok = b0 == 0xE0   ? b1 >= 0xA0 && b1 <= 0xBF
                           : b0 == 0xED ? b1 >= 0x80 && b1 <= 0x9F
                                        : continuation(i + 1);
    return second_ok && continuation(i + 2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const bool second_ok = b0 == 0xF0   ? b1 >= 0x90 && b1 <= 0xBF
                           : b0 == 0xF4 ? b1 >= 0x80 && b1 <= 0x8F
                                        : continuation(i + 1);
    return second_ok && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

void check_encoding(const std::string& file, std::string_view text) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t column = i - line_start + 1;
    if (text[i] == '\0')
      refuse(file, line, "a NUL byte in column " + std::to_string(column),
             "a suite file is UTF-8 text; is this the right file?");
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", unsigned((unsigned char)text[i]));
      refuse(file, line,
             std::string("not UTF-8 (byte ") + byte + " in column " + std::to_string(column) + ")",
             "save the suite file as UTF-8");
    }
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += n;
  }
}

// How deeply each statement nests: a table header's dotted parts (plus one for [[array]]
// headers), then a key's dotted parts, then the arrays and inline tables of its value with the
// dotted keys inside them. Strings and comments are skipped, so brackets and dots in them do
// not count. The count errs on the high side by a level or two; the limit leaves room for that.
class DepthScan {
 public:
  DepthScan(const std::string& file, std::string_view text) : file_(file), text_(text) {}

  void run() {
    int table_depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        skip_comment();
      } else if (c == '[') {
        table_depth = header();
      } else {
        key_value(table_depth);
      }
    }
  }

 private:
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void deeper(int depth) const {
    if (depth > kMaxSuiteDepth)
      refuse(file_, line_,
             "nested more than " + std::to_string(kMaxSuiteDepth) +
                 " levels deep (dotted keys, table headers, arrays and inline tables together)",
             "a suite needs [defaults] and [[run]] tables of plain keys; see "
             "suites/quick-cpu.toml");
  }

  void skip_comment() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }

  // At a quote: past the string, counting the lines of a multi-line one. An unterminated
  // one-line string stops at the end of its line (the parser reports it).
  void skip_string() {
    const char quote = text_[pos_];
    const bool basic = quote == '"';
    if (peek(1) == quote && peek(2) == quote) {
      pos_ += 3;
      while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c == quote && peek(1) == quote && peek(2) == quote) {
          pos_ += 3;
          return;
        }
        if (c == '\n') ++line_;
        if (basic && c == '\\' && peek(1) == '\n') ++line_;
        pos_ += basic && c == '\\' && pos_ + 1 < text_.size() ? 2 : 1;
      }
      return;
    }
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n') {
      const char c = text_[pos_];
      if (c == quote) {
        ++pos_;
        return;
      }
      pos_ += basic && c == '\\' && peek(1) != '\n' && pos_ + 1 < text_.size() ? 2 : 1;
    }
  }

  // At "[": the depth of the tables the header names; the rest of its line is skipped.
  int header() {
    int depth = 1;
    ++pos_;
    if (peek() == '[') {
      ++depth;
      ++pos_;
    }
    depth = dotted_key(depth, ']');
    skip_comment();  // the closing brackets and a comment; anything else is the parser's
    return depth;
  }

  // A (dotted) key up to `end` or the line's end, one level deeper per part after `depth`'s
  // first; quoted parts may hold dots. Returns the depth of its last part.
  int dotted_key(int depth, char end) {
    deeper(depth);
    while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != end) {
      const char c = text_[pos_];
      if (c == '"' || c == '\'') {
        skip_string();
        continue;
      }
      if (c == '.') deeper(++depth);
      ++pos_;
    }
    return depth;
  }

  void key_value(int depth) {
    depth = dotted_key(depth + 1, '=');
    if (peek() != '=') return;  // not a key = value line: the parser says so
    ++pos_;
    value(depth);
  }

  // A value runs to the end of its line, or past it while an array or inline table is open.
  void value(int depth) {
    struct Open {
      char bracket;       // '[' or '{'
      int key_parts = 0;  // dotted parts of the inline table's current key
      bool in_key = false;
    };
    std::vector<Open> open;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        if (open.empty()) return;
        ++line_;
      } else if (c == '#') {
        skip_comment();
        continue;
      } else if (c == '"' || c == '\'') {
        skip_string();
        continue;
      } else if (c == '[' || c == '{') {
        deeper(++depth);
        open.push_back({c, 0, c == '{'});
      } else if ((c == ']' || c == '}') && !open.empty()) {
        depth -= 1 + open.back().key_parts;
        open.pop_back();
      } else if (!open.empty() && open.back().bracket == '{') {
        Open& table = open.back();
        if (c == ',') {
          depth -= table.key_parts;
          table.key_parts = 0;
          table.in_key = true;
        } else if (c == '=') {
          table.in_key = false;
        } else if (c == '.' && table.in_key) {
          ++table.key_parts;
          deeper(++depth);
        }
      }
      ++pos_;
    }
  }

  const std::string& file_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

void check_suite_text(const std::string& file, std::string_view text) {
  check_encoding(file, text);
  DepthScan(file, text).run();
}

std::string read_suite_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kResource, "cannot read suite " + path, "check the path");
  // One byte more than the limit tells a file at the limit from a larger one, without
  // trusting a size that a FIFO or /proc file does not have.
  std::string text(kMaxSuiteBytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) throw Error(ErrorKind::kResource, "cannot read suite " + path, "check the path");
  text.resize(std::size_t(in.gcount()));
  if (text.size() > kMaxSuiteBytes)
    throw Error(ErrorKind::kUsage,
                path + ": larger than " + std::to_string(kMaxSuiteBytes >> 20) +
                    " MiB, the limit for a suite file",
                "a suite lists runs: a few kilobytes; is this the right file?");
  check_suite_text(path, text);
  return text;
}

}  // namespace dlbench::suite
