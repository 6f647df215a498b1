// Greedy decoding's choice per sentence (Backend::greedy_pick): a scan of each row, the first
// of equal highest scores kept.
#include <cmath>

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

}  // namespace dlbench::backend::cpu
