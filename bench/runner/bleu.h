// Corpus BLEU (Papineni et al. 2002) over token ids, as SacreBLEU scores a corpus by default, so
// GNMT's translations can be scored on a held-out test set (MLPerf's GNMT target was BLEU 24 on
// newstest2014). Per order n = 1..4, the hypotheses' n-grams that the reference of the same
// sentence holds, each counted at most as often as the reference has it, are summed over the
// corpus, as are the hypotheses' n-grams; precision p_n is their ratio. SacreBLEU's default "exp"
// smoothing replaces a p_n of no matches by 1 / (2^k total_n), k counting such orders so far;
// an order with no n-grams at all makes the score 0. With c the hypotheses' total length and r
// the references', the brevity penalty is exp(1 - r / c) where c < r, else 1, and
//   BLEU = 100 * penalty * exp(mean over n of log p_n).
// Scoring ids rather than detokenized text differs from SacreBLEU's own tokenizer; scores from
// the same BPE segmentation are comparable among themselves.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace dlbench::runner {

constexpr int kBleuOrder = 4;

// What corpus BLEU sums over the sentences.
struct BleuCounts {
  std::array<std::int64_t, kBleuOrder> matches{}, totals{};  // per order, 1-grams first
  std::int64_t hypothesis_length = 0, reference_length = 0;
};

// Adds one sentence: its hypothesis and its one reference, as token ids (without BOS, EOS or
// padding: the caller strips them).
void add_sentence(std::span<const std::int32_t> hypothesis, std::span<const std::int32_t> reference,
                  BleuCounts& counts);

struct Bleu {
  double score = 0;                             // 0-100
  std::array<double, kBleuOrder> precisions{};  // percent, smoothed as scored
  double brevity_penalty = 0;
};
Bleu corpus_bleu(const BleuCounts& counts);

}  // namespace dlbench::runner
