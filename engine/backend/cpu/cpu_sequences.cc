// Sequences reversed within their lengths (Backend::reverse_sequences): a row copy per (step,
// sample), sequence_reverse.h saying from where.
#include <cstring>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/sequence_reverse.h"

namespace dlbench::backend::cpu {

void CpuBackend::reverse_sequences_impl(const SequenceParams& p, const Tensor& lengths,
                                        const Tensor& x, const Tensor& y, GradMode mode) {
  const char* op = "reverse_sequences";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const std::int32_t* l = checked_lengths(lengths, p.steps, op, "lengths");
  const std::int64_t width = x.dim(1);
  const float* px = x.data_as<float>();
  float* py = y.data_as<float>();
  const bool accumulate = mode == GradMode::kAccumulate;
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t t = 0; t < p.steps; ++t)
    for (std::int64_t b = 0; b < p.batch; ++b) {
      const float* src = px + (reversed_step(t, l[b]) * p.batch + b) * width;
      float* dst = py + (t * p.batch + b) * width;
      if (accumulate)
        for (std::int64_t c = 0; c < width; ++c) dst[c] += src[c];
      else
        std::memcpy(dst, src, static_cast<std::size_t>(width) * sizeof(float));
    }
}

}  // namespace dlbench::backend::cpu
