// Documents of token ids, as BERT's pretraining reads a corpus once it is tokenized: one
// sentence per line, its WordPiece ids as decimal integers separated by spaces or tabs, and a
// blank line between documents (create_pretraining_data.py's input layout, after its tokenizer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dlbench::data {

struct TokenDocuments {
  std::string path;
  std::vector<std::int32_t> tokens;           // every sentence's ids, in order
  std::vector<std::int64_t> sentences = {0};  // sentence s: tokens [s[i], s[i + 1])
  std::vector<std::int64_t> documents = {0};  // document d: sentences [d[i], d[i + 1])
  std::int32_t largest_id = -1;

  std::int64_t sentence_count() const { return static_cast<std::int64_t>(sentences.size()) - 1; }
  std::int64_t document_count() const { return static_cast<std::int64_t>(documents.size()) - 1; }
  std::span<const std::int32_t> sentence(std::int64_t s) const {
    return {tokens.data() + sentences[static_cast<std::size_t>(s)],
            static_cast<std::size_t>(sentences[static_cast<std::size_t>(s) + 1] -
                                     sentences[static_cast<std::size_t>(s)])};
  }
};

// Appends the ids of line `line` of `path` (fields separated by spaces or tabs) to `out`;
// Error(kUsage) naming the file and line for a field that is not a token id (a word, a negative
// or too large number, a binary file's bytes), with `hint` as what the user can do.
void append_token_ids(std::string_view text, const std::string& path, std::int64_t line,
                      const std::string& hint, std::vector<std::int32_t>& out);

// Error(kUsage) naming the file and line for what is not a token id (a word, a negative or
// too large number, a compressed file's bytes), and for a file with no ids at all.
TokenDocuments read_token_documents(const std::string& path);

}  // namespace dlbench::data
