// The sum of squares of a flat f32 buffer (Backend::sum_squares), for clipping gradients by their
// global norm, as the CUDA backend computes it (cuda_norm.cu) but in its own order.
#include <algorithm>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {

// Chunks of a fixed size, each summed in order in f64 on whichever thread takes it, then the
// chunks' sums added in order: the bits depend on the size alone, not on the threads.
void CpuBackend::sum_squares_impl(const Tensor& x, const Tensor& out, GradMode mode) {
  const char* op = "sum_squares";
  require_f32(x, op, "x"), require_f32(out, op, "out");
  constexpr std::int64_t kChunk = 1 << 16;
  const std::int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  const float* px = x.data_as<float>();
  std::vector<double> parts(static_cast<std::size_t>(chunks), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < chunks; ++k) {
    double s = 0;
    for (std::int64_t i = k * kChunk; i < std::min(n, (k + 1) * kChunk); ++i)
      s += static_cast<double>(px[i]) * px[i];
    parts[static_cast<std::size_t>(k)] = s;
  }
  double total = mode == GradMode::kAccumulate ? *out.data_as<float>() : 0.0;
  for (double part : parts) total += part;
  *out.data_as<float>() = static_cast<float>(total);
}

}  // namespace dlbench::backend::cpu
