// Decoding's choices per sentence: greedy (Backend::greedy_pick), a scan of each row keeping the
// first of equal highest scores; beam search (Backend::beam_pick), each hypothesis's best ids by
// a log-softmax in double, then the sentence's best continuations among them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/dnnl_util.h"

namespace dlbench::backend::cpu {

void CpuBackend::greedy_pick_impl(const GreedyParams& p, const Tensor& logits, const Tensor& tokens,
                                  const Tensor& finished, const Tensor& lengths,
                                  const Tensor& unfinished) {
  require_f32(logits, "greedy_pick", "logits");
  const float* scores = logits.data_as<float>();
  std::int32_t* token = tokens.data_as<std::int32_t>();
  std::int32_t* done = finished.data_as<std::int32_t>();
  std::int32_t* length = lengths.data_as<std::int32_t>();
  std::int32_t open = 0;
  for (std::int64_t n = 0; n < p.batch; ++n) {
    if (done[n] != 0) {
      token[n] = p.pad;
      continue;
    }
    const float* row = scores + n * p.vocabulary;
    std::int64_t best = 0;
    float top = -INFINITY;
    for (std::int64_t j = 0; j < p.vocabulary; ++j)
      if (row[j] > top) top = row[j], best = j;  // NaN is never above
    token[n] = static_cast<std::int32_t>(best);
    ++length[n];
    done[n] = token[n] == p.eos ? 1 : 0;
    open += done[n] == 0 ? 1 : 0;
  }
  unfinished.data_as<std::int32_t>()[0] = open;
}

namespace {

struct Candidate {
  double score;
  std::int64_t k, j;  // the hypothesis it continues, its token
};

// The order beam_pick ranks candidates in: the higher score, then the lower k, then the lower j.
bool ranks_before(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.k != b.k ? a.k < b.k : a.j < b.j;
}

}  // namespace

void CpuBackend::beam_pick_impl(const BeamParams& p, const Tensor& logits, const Tensor& attention,
                                const BeamState& state, const Tensor& tokens, const Tensor& parents,
                                const Tensor& unfinished) {
  require_f32(logits, "beam_pick", "logits");
  const std::int64_t K = p.beam, V = p.vocabulary, S = p.sources;
  const float* x = logits.data_as<float>();
  const float* attend = attention.data_as<float>();
  float* score = state.scores.data_as<float>();
  std::int32_t* done = state.finished.data_as<std::int32_t>();
  std::int32_t* length = state.lengths.data_as<std::int32_t>();
  float* cover = state.coverage.data_as<float>();
  std::int32_t* token = tokens.data_as<std::int32_t>();
  std::int32_t* parent = parents.data_as<std::int32_t>();
  std::int32_t open = 0;
  std::vector<Candidate> candidates;
  std::vector<float> old_score(static_cast<std::size_t>(K)),
      old_cover(static_cast<std::size_t>(K * S));
  std::vector<std::int32_t> old_done(old_score.size()), old_length(old_score.size());
  for (std::int64_t n = 0; n < p.batch; ++n) {
    candidates.clear();
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int64_t row = n * K + k;
      if (done[row] != 0) {
        candidates.push_back({score[row], k, p.pad});
        continue;
      }
      const float* r = x + row * V;
      double top = -INFINITY, sum = 0;
      for (std::int64_t j = 0; j < V; ++j) top = std::max(top, static_cast<double>(r[j]));
      for (std::int64_t j = 0; j < V; ++j) sum += std::exp(static_cast<double>(r[j]) - top);
      const double log_sum = top + std::log(sum);
      // The hypothesis's K best ids: what the sentence's K best can draw from it.
      std::vector<Candidate> best;
      for (std::int64_t j = 0; j < V; ++j) {
        double value = score[row] + (static_cast<double>(r[j]) - log_sum);
        if (std::isnan(value)) value = -INFINITY;  // a NaN anywhere in the row: see backend.h
        const Candidate c{value, k, j};
        if (static_cast<std::int64_t>(best.size()) == K && !ranks_before(c, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), c, ranks_before), c);
        if (static_cast<std::int64_t>(best.size()) > K) best.pop_back();
      }
      candidates.insert(candidates.end(), best.begin(), best.end());
    }
    std::stable_sort(candidates.begin(), candidates.end(), ranks_before);
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int64_t row = n * K + k;
      old_score[k] = score[row], old_done[k] = done[row], old_length[k] = length[row];
      std::copy(cover + row * S, cover + (row + 1) * S, old_cover.begin() + k * S);
    }
    bool any_open = false;
    for (std::int64_t i = 0; i < K; ++i) {
      const Candidate& c = candidates[static_cast<std::size_t>(i)];
      const std::int64_t row = n * K + i, from = n * K + c.k;
      const bool was_done = old_done[c.k] != 0;
      token[row] = static_cast<std::int32_t>(c.j);
      parent[row] = static_cast<std::int32_t>(from);
      score[row] = static_cast<float>(c.score);
      done[row] = was_done || c.j == p.eos ? 1 : 0;
      length[row] = old_length[c.k] + (was_done ? 0 : 1);
      for (std::int64_t s = 0; s < S; ++s)
        cover[row * S + s] = old_cover[c.k * S + s] + (was_done ? 0.0f : attend[from * S + s]);
      any_open = any_open || done[row] == 0;
    }
    open += any_open ? 1 : 0;
  }
  unfinished.data_as<std::int32_t>()[0] = open;
}

}  // namespace dlbench::backend::cpu
