#include "cli/quality_rows.h"

#include "cli/number_text.h"

namespace dlbench::cli {
using result::find_metric;

void add_quality_rows(Section& s, const result::RunResult& r) {
  const auto* hr = find_metric(r, "quality/hr_at_10");
  const auto* ndcg = find_metric(r, "quality/ndcg_at_10");
  const auto* pop_hr = find_metric(r, "quality/popularity_hr_at_10");
  const auto* pop_ndcg = find_metric(r, "quality/popularity_ndcg_at_10");
  const auto* lists = find_metric(r, "quality/ranked_lists");
  if (hr && ndcg && pop_hr && pop_ndcg && lists)
    s.row("Ranking", "HR@10 " + fixed(hr->value, 3) + ", NDCG@10 " + fixed(ndcg->value, 3) +
                         " over " + fixed(lists->value, 0) +
                         " held-out items (popularity baseline: HR@10 " + fixed(pop_hr->value, 3) +
                         ", NDCG@10 " + fixed(pop_ndcg->value, 3) + ")");
  if (const auto* dice = find_metric(r, "quality/dice_mean")) {
    std::string classes;
    for (int k = 1; const auto* d = find_metric(r, "quality/dice_class_" + std::to_string(k)); ++k)
      classes +=
          std::string(k == 1 ? "" : ", ") + "class " + std::to_string(k) + " " + fixed(d->value, 3);
    const auto* slices = find_metric(r, "quality/held_out_slices");
    const auto* patches = find_metric(r, "quality/held_out_patches");
    const std::string on = patches ? fixed(patches->value, 0) + " held-out patches"
                                   : fixed(slices ? slices->value : 0, 0) + " held-out slices";
    s.row("Dice", fixed(dice->value, 3) + " (" + classes + ") on " + on);
  }
  if (const auto* tested = find_metric(r, "quality/test_sentences")) {
    const auto* left_out = find_metric(r, "quality/test_sentences_left_out");
    const std::string left = left_out
                                 ? fixed(left_out->value, 0) +
                                       " left out, longer than the model's longest sentence length"
                                 : "";
    if (const auto* bleu = find_metric(r, "quality/bleu")) {
      std::string precisions;
      for (int n = 1; const auto* p = find_metric(r, "quality/bleu_precision_" + std::to_string(n));
           ++n)
        precisions += (n == 1 ? std::string() : "/") + fixed(p->value, 1);
      const auto* brevity = find_metric(r, "quality/bleu_brevity_penalty");
      s.row("BLEU", fixed(bleu->value, 2) + " on " + fixed(tested->value, 0) + " test sentences (" +
                        (r.config.beam > 1 ? "beam " + std::to_string(r.config.beam) : "greedy") +
                        "; 1-4-gram precisions " + precisions + ", brevity penalty " +
                        fixed(brevity ? brevity->value : 0, 3) + ")" +
                        (left.empty() ? "" : "; " + left));
    } else {
      s.row("BLEU", "none: no test sentence fits the model (" + left + ")");
    }
  } else if (const auto* failed = find_metric(r, "quality/test_set_failed")) {
    s.row("BLEU", failed->description);
  }
  // What the vectors learned: each probe word's nearest words, with their cosine similarity.
  for (std::size_t i = 0; i < r.neighbours.size(); ++i) {
    const result::WordNeighbours& n = r.neighbours[i];
    std::string nearest = n.word + ":";
    for (const result::Neighbour& near : n.nearest)
      nearest += " " + near.word + " " + fixed(near.cosine, 2);
    s.row(i == 0 ? "Nearest words" : "", nearest);
  }
}

}  // namespace dlbench::cli
