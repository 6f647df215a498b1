#include "bench/runner/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace dlbench::runner {
namespace {

// Each n-gram of the sentence with its count: n-grams as vectors of ids, ordered.
std::map<std::vector<std::int32_t>, std::int64_t> ngrams(std::span<const std::int32_t> tokens,
                                                         int n) {
  std::map<std::vector<std::int32_t>, std::int64_t> counts;
  for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= tokens.size(); ++i)
    ++counts[std::vector<std::int32_t>(tokens.begin() + static_cast<std::ptrdiff_t>(i),
                                       tokens.begin() + static_cast<std::ptrdiff_t>(i) + n)];
  return counts;
}

}  // namespace

void add_sentence(std::span<const std::int32_t> hypothesis, std::span<const std::int32_t> reference,
                  BleuCounts& counts) {
  counts.hypothesis_length += static_cast<std::int64_t>(hypothesis.size());
  counts.reference_length += static_cast<std::int64_t>(reference.size());
  for (int n = 1; n <= kBleuOrder; ++n) {
    const auto ref = ngrams(reference, n);
    for (const auto& [gram, count] : ngrams(hypothesis, n)) {
      counts.totals[n - 1] += count;
      const auto it = ref.find(gram);
      if (it != ref.end()) counts.matches[n - 1] += std::min(count, it->second);
    }
  }
}

Bleu corpus_bleu(const BleuCounts& counts) {
  Bleu b;
  const double c = static_cast<double>(counts.hypothesis_length);
  const double r = static_cast<double>(counts.reference_length);
  b.brevity_penalty = c >= r ? 1.0 : (c > 0 ? std::exp(1.0 - r / c) : 0.0);
  double smoothing = 1.0, log_sum = 0.0;
  for (int n = 0; n < kBleuOrder; ++n) {
    const auto total = static_cast<double>(counts.totals[n]);
    if (total == 0) return b;  // no n-grams of this order: the score is 0, as SacreBLEU's
    if (counts.matches[n] == 0) {
      smoothing *= 2;
      b.precisions[n] = 100.0 / (smoothing * total);
    } else {
      b.precisions[n] = 100.0 * static_cast<double>(counts.matches[n]) / total;
    }
    log_sum += std::log(b.precisions[n]);
  }
  b.score = b.brevity_penalty * std::exp(log_sum / kBleuOrder);
  return b;
}

}  // namespace dlbench::runner
