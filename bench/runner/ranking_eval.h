// Ranking quality of a trained recommender on its data's held-out items, as the NCF paper
// measures it: each held-out item is ranked among up to 100 items its user never rated, and
// HR@10 is the share of lists where it lands in the top 10, NDCG@10 the mean of 1 / log2(rank + 2)
// over those (0 elsewhere). The same for a popularity baseline (an item scores its training
// count), which a model that learned anything must beat.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "bench/result/run_config.h"
#include "bench/result/run_result.h"
#include "engine/data/dataset.h"
#include "engine/models/model_spec.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {

constexpr int kRankCutoff = 10;      // HR@10, NDCG@10
constexpr int kRankNegatives = 100;  // unrated items beside each held-out one
struct RankingScores {
  std::int64_t lists = 0;
  double hit_rate = 0, ndcg = 0;
};

// Candidate 0 of each list is the held-out item; its rank is how many of the list's others
// score higher, plus half of those that tie (the expected rank under a random tie-break).
RankingScores rank_held_out(std::span<const std::int64_t> offsets, std::span<const double> scores,
                            int cutoff);

struct RankingQuality {
  RankingScores model, popularity;
  int negatives = kRankNegatives;
};

// Scores every candidate pair with the trained weights (an inference graph of the same model
// with `trained`'s weights loaded) and ranks them; nullopt when the data holds nothing out.
std::optional<RankingQuality> evaluate_ranking(const models::ModelSpec& model,
                                               const models::ModelConfig& trained_config,
                                               const result::RunConfig& config,
                                               const nn::Trainer& trained, backend::Backend& be);

// As metrics quality/hr_at_10, quality/ndcg_at_10, their quality/popularity_* baselines and
// quality/ranked_lists.
void add_ranking_metrics(result::RunResult& r, const RankingQuality& q);

}  // namespace dlbench::runner
