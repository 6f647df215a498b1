// Negative sampling for implicit feedback (Backend::sample_negatives): positives first with label
// 1, then each negative j with user j % P and an item from negative_item(), label 0.
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

}  // namespace dlbench::backend::cpu
