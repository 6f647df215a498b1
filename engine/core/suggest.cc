#include "engine/core/suggest.h"

#include <algorithm>

namespace dlbench {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours each cost one ("ifno" is one edit from "info").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Close means at most a third of the word wrong (and at least one edit allowed).
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    // The lengths alone differ by more than the limit: no need for the quadratic table (a
    // hostile suite file's key may be a megabyte long).
    std::size_t length_gap =
        word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (length_gap > limit) continue;
    std::size_t d = edit_distance(word, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return !best.empty() && best_distance <= limit ? best : std::string();
}

}  // namespace dlbench
