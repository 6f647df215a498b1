// Negative sampling on the CPU: NCF's (Backend::sample_negatives: positives first with label 1,
// then each negative j with user j % P and an item from negative_item(), label 0) and
// Word2Vec's (Backend::sample_candidates: each pair's context, then draws from a table).
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/sampled_negatives.h"

namespace dlbench::backend::cpu {

void CpuBackend::sample_negatives_impl(const NegativeSamplingParams& p, const Tensor& step,
                                       const Tensor& users_pos, const Tensor& items_pos,
                                       const Tensor& users, const Tensor& items,
                                       const Tensor& labels) {
  const char* op = "sample_negatives";
  require_cpu(step, op, "step"), require_cpu(users_pos, op, "users_pos");
  require_cpu(items_pos, op, "items_pos"), require_cpu(users, op, "users");
  require_cpu(items, op, "items"), require_f32(labels, op, "labels");
  auto* counter = step.data_as<std::int32_t>();
  *counter += 1;
  const std::uint64_t key = negatives_key(p.seed, *counter);
  const std::int64_t positives = users_pos.dim(0), batch = users.dim(0);
  const auto* up = users_pos.data_as<std::int32_t>();
  const auto* ip = items_pos.data_as<std::int32_t>();
  auto* u = users.data_as<std::int32_t>();
  auto* it = items.data_as<std::int32_t>();
  float* label = labels.data_as<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < batch; ++r) {
    const bool positive = r < positives;
    const std::int64_t j = r - positives;
    u[r] = up[positive ? r : j % positives];
    it[r] = positive ? ip[r] : negative_item(key, j, p.items);
    label[r] = positive ? 1.0f : 0.0f;
  }
}

void CpuBackend::sample_candidates_impl(const CandidateSamplingParams& p, const Tensor& step,
                                        const Tensor& contexts, const Tensor& cdf,
                                        const Tensor& ids, const Tensor& labels) {
  const char* op = "sample_candidates";
  require_cpu(step, op, "step"), require_cpu(contexts, op, "contexts");
  require_cpu(cdf, op, "cdf"), require_cpu(ids, op, "ids"), require_f32(labels, op, "labels");
  auto* counter = step.data_as<std::int32_t>();
  *counter += 1;
  const std::uint64_t key = negatives_key(p.seed, *counter);
  const std::int64_t pairs = ids.dim(0), m = ids.dim(1), vocab = cdf.dim(0);
  const auto* context = contexts.data_as<std::int32_t>();
  const float* table = cdf.data_as<float>();
  auto* out = ids.data_as<std::int32_t>();
  float* label = labels.data_as<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < pairs * m; ++e) {
    const std::int64_t pair = e / m, column = e % m;
    out[e] = column == 0 ? context[pair]
                         : table_draw(table, vocab, unit_uniform(key, pair * (m - 1) + column - 1));
    label[e] = column == 0 ? 1.0f : 0.0f;
  }
}

}  // namespace dlbench::backend::cpu
