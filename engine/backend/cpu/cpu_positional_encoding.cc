// The Transformer's embedding tail, a row at a time (positional_encoding.h has the encoding):
//   y[r, c] (+)= scale x[r, c] + (encode ? PE(r % sequence, c) : 0)
// with the encoding in f32, as the CUDA kernel computes it.
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/positional_encoding.h"

namespace dlbench::backend::cpu {

void CpuBackend::positional_encoding_impl(const PositionalEncodingParams& p, const Tensor& x,
                                          const Tensor& y, GradMode mode) {
  const char* op = "positional_encoding";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const std::int64_t rows = y.dim(0), width = y.dim(1), half = width / 2;
  const float step = positional_encoding_step(width);
  const float* px = x.data_as<float>();
  float* py = y.data_as<float>();
  const bool accumulate = mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t position = r % p.sequence;
    const float* xr = px + r * width;
    float* yr = py + r * width;
    for (std::int64_t c = 0; c < width; ++c) {
      float v = p.scale * xr[c];
      if (p.encode) v += positional_encoding_value(position, c, half, step);
      yr[c] = accumulate ? yr[c] + v : v;
    }
  }
}

}  // namespace dlbench::backend::cpu
