// The Transformer's sinusoidal position encoding (Vaswani et al. 2017, section 3.5), one formula
// for the CPU backend and the CUDA kernel (Backend::positional_encoding). In fairseq's and
// tensor2tensor's layout, with half = width / 2:
//   w_j = exp(-ln(10000) j / (half - 1)),  j in [0, half)
//   PE(pos, c) = sin(pos w_c)           for c <  half
//   PE(pos, c) = cos(pos w_(c - half))  for c >= half
// so the frequencies run from 1 down to 1/10000. Computed in f32 as fairseq computes it: the
// step ln(10000) / (half - 1) rounded to f32 once, then w_j = exp(-j step), the angle pos w_j
// and its sine or cosine, each in f32. With half = 1 (width 2) the only frequency is w_0 = 1:
// the step's denominator is max(half - 1, 1), as tensor2tensor takes it, not a division by 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/core/host_device.h"

namespace dlbench::backend {

inline float positional_encoding_step(std::int64_t width) {
  const std::int64_t intervals = std::max<std::int64_t>(width / 2 - 1, 1);
  return static_cast<float>(std::log(10000.0) / static_cast<double>(intervals));
}

// PE(position, column) over width = 2 half columns, given positional_encoding_step(width).
DLBENCH_HOST_DEVICE inline float positional_encoding_value(std::int64_t position,
                                                           std::int64_t column, std::int64_t half,
                                                           float step) {
  const bool cosine = column >= half;
  const float j = static_cast<float>(cosine ? column - half : column);
  const float angle = static_cast<float>(position) * expf(-j * step);
  return cosine ? cosf(angle) : sinf(angle);
}

}  // namespace dlbench::backend
