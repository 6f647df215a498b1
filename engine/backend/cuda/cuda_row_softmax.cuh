// The softmax of one row of at most kMaxRowClasses scores, kept in registers by the thread that
// owns the row: the per-pixel losses' building block (a segmentation head has a few classes and
// millions of rows, so a thread per row, not a block per row).
#pragma once

#include <cmath>

#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {

// q = softmax(z[0, classes)) in f32, q[j] = 0 for j >= classes; returns log sum_j exp(z[j] - max)
// with max = max_j z[j] (out), so a loss can take log q[label] = z[label] - max - result without
// the underflow of log(q[label]).
template <class T>
__device__ __forceinline__ float row_softmax(const T* z, int classes, float (&q)[kMaxRowClasses],
                                             float& max) {
  max = -INFINITY;
#pragma unroll
  for (int j = 0; j < kMaxRowClasses; ++j)
    if (j < classes) max = fmaxf(max, to_f32(z[j]));
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kMaxRowClasses; ++j) {
    q[j] = j < classes ? expf(to_f32(z[j]) - max) : 0.0f;
    sum += q[j];
  }
#pragma unroll
  for (int j = 0; j < kMaxRowClasses; ++j) q[j] /= sum;
  return logf(sum);
}

}  // namespace dlbench::backend::cuda
