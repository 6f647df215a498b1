#include "bench/runner/ranking_eval.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "bench/runner/trainer_setup.h"
#include "engine/core/error.h"

namespace dlbench::runner {
namespace {

// Pairs scored per inference step: 256 lists of 101.
constexpr std::int64_t kScoreBatch = 256 * (kRankNegatives + 1);

// The logits of every (users[i], items[i]), by an inference trainer holding `trained`'s weights.
std::vector<double> score_pairs(const models::ModelSpec& model, models::ModelConfig mc,
                                const result::RunConfig& config, const nn::Trainer& trained,
                                backend::Backend& be, const data::RankingTest& test) {
  const auto pairs = static_cast<std::int64_t>(test.items.size());
  mc.batch = std::min(pairs, kScoreBatch);
  const std::unique_ptr<nn::Trainer> twin =
      inference_twin(model, mc, mc.batch, config, trained, be);
  nn::Trainer& net = *twin;
  const std::vector<data::InputSpec>& specs = net.graph().input_specs();
  DLBENCH_CHECK(specs.size() == 2 && specs[0].name == "users" && specs[1].name == "items",
                "ranking: the inference graph does not take (users, items) pairs");
  Buffer logits_f32(be.allocator(), sizeof(float) * static_cast<std::size_t>(mc.batch));
  const Tensor scores_out(logits_f32.data(), {mc.batch, 1}, DType::kF32, be.device());
  std::vector<std::int32_t> users(static_cast<std::size_t>(mc.batch)),
      items(static_cast<std::size_t>(mc.batch));
  std::vector<float> chunk(static_cast<std::size_t>(mc.batch));
  std::vector<double> scores;
  scores.reserve(static_cast<std::size_t>(pairs));
  for (std::int64_t first = 0; first < pairs; first += mc.batch) {
    const std::int64_t n = std::min(mc.batch, pairs - first);
    // The last chunk is padded with the first pair; those scores are dropped.
    for (std::int64_t i = 0; i < mc.batch; ++i) {
      const auto from = static_cast<std::size_t>(i < n ? first + i : 0);
      users[static_cast<std::size_t>(i)] = test.users[from];
      items[static_cast<std::size_t>(i)] = test.items[from];
    }
    be.from_host(users.data(), net.inputs()[0]);
    be.from_host(items.data(), net.inputs()[1]);
    net.infer_step();
    be.cast(net.logits(), scores_out);
    be.to_host(scores_out, chunk.data());
    scores.insert(scores.end(), chunk.begin(), chunk.begin() + n);
  }
  return scores;
}

}  // namespace

RankingScores rank_held_out(std::span<const std::int64_t> offsets, std::span<const double> scores,
                            int cutoff) {
  RankingScores out;
  for (std::size_t l = 0; l + 1 < offsets.size(); ++l) {
    const auto first = static_cast<std::size_t>(offsets[l]);
    const auto last = static_cast<std::size_t>(offsets[l + 1]);
    double rank = 0;
    for (std::size_t c = first + 1; c < last; ++c)
      rank += scores[c] > scores[first] ? 1.0 : scores[c] == scores[first] ? 0.5 : 0.0;
    if (rank < cutoff) {
      out.hit_rate += 1;
      out.ndcg += 1 / std::log2(rank + 2);
    }
    ++out.lists;
  }
  if (out.lists > 0) {
    out.hit_rate /= static_cast<double>(out.lists);
    out.ndcg /= static_cast<double>(out.lists);
  }
  return out;
}

std::optional<RankingQuality> evaluate_ranking(const models::ModelSpec& model,
                                               const models::ModelConfig& trained_config,
                                               const result::RunConfig& config,
                                               const nn::Trainer& trained, backend::Backend& be) {
  if (!trained_config.data) return std::nullopt;
  const data::RankingTest test = trained_config.data->ranking_test(kRankNegatives, config.seed);
  if (test.items.empty()) return std::nullopt;
  const std::vector<double> scores = score_pairs(model, trained_config, config, trained, be, test);
  RankingQuality q;
  q.model = rank_held_out(test.offsets, scores, kRankCutoff);
  q.popularity = rank_held_out(test.offsets, test.popularity, kRankCutoff);
  return q;
}

void add_ranking_metrics(result::RunResult& r, const RankingQuality& q) {
  const std::string of = " of the held-out item among up to " + std::to_string(q.negatives) +
                         " unrated ones, per user";
  result::add_metric(r, "quality/hr_at_10", q.model.hit_rate, "ratio",
                     "HR@10: share ranked in the top 10" + of);
  result::add_metric(r, "quality/ndcg_at_10", q.model.ndcg, "ratio", "NDCG@10" + of);
  result::add_metric(r, "quality/popularity_hr_at_10", q.popularity.hit_rate, "ratio",
                     "HR@10 of the popularity baseline (items ranked by training count)");
  result::add_metric(r, "quality/popularity_ndcg_at_10", q.popularity.ndcg, "ratio",
                     "NDCG@10 of the popularity baseline");
  result::add_metric(r, "quality/ranked_lists", static_cast<double>(q.model.lists), "lists",
                     "users with a held-out item, each ranked once");
}

}  // namespace dlbench::runner
