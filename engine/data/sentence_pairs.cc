#include "engine/data/sentence_pairs.h"

#include <algorithm>
#include <fstream>

#include "engine/core/error.h"
#include "engine/data/token_documents.h"

namespace dlbench::data {
namespace {

constexpr const char* kFormat =
    "one sentence pair per line: the source sentence's token ids separated by spaces, a tab, the "
    "target sentence's (paste source.ids target.ids > pairs.ids)";

}  // namespace

SentencePairs read_sentence_pairs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kUsage, "cannot read the sentence-pair file " + path,
                std::string("give a file of ") + kFormat);
  const std::string hint = std::string("sentence-pair files hold ") + kFormat +
                           " (text must be tokenized into the model's BPE ids first)";
  SentencePairs pairs;
  pairs.path = path;
  std::string line;
  std::int64_t number = 0;
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::kUsage, path + ":" + std::to_string(number) + ": " + what, hint);
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) fail("no tab between the source and the target sentence");
    if (line.find('\t', tab + 1) != std::string::npos)
      fail("more than one tab: a line holds one source and one target sentence");
    const std::string_view text(line);
    const std::pair<TokenSentences*, std::string_view> sides[] = {
        {&pairs.source, text.substr(0, tab)}, {&pairs.target, text.substr(tab + 1)}};
    for (const auto& [side, ids] : sides) {
      const std::size_t before = side->tokens.size();
      append_token_ids(ids, path, number, hint, side->tokens);
      if (side->tokens.size() == before)
        fail(std::string("the ") + (side == &pairs.source ? "source" : "target") +
             " sentence is empty");
      for (std::size_t t = before; t < side->tokens.size(); ++t) {
        if (side->tokens[t] < kFirstCorpusId)
          fail("id " + std::to_string(side->tokens[t]) + " is padding, [BOS] or [EOS] (ids below " +
               std::to_string(kFirstCorpusId) +
               "), which the reader places itself (fairseq's binarized data ends each sentence "
               "with its [EOS], 2: leave it out)");
        pairs.largest_id = std::max(pairs.largest_id, side->tokens[t]);
      }
      side->offsets.push_back(static_cast<std::int64_t>(side->tokens.size()));
    }
  }
  if (in.bad())
    throw Error(ErrorKind::kUsage, "reading " + path + " failed",
                std::string("give a readable file (not a folder) of ") + kFormat);
  if (pairs.count() == 0)
    throw Error(ErrorKind::kUsage, path + " holds no sentence pairs",
                std::string("give a file of ") + kFormat);
  return pairs;
}

}  // namespace dlbench::data
