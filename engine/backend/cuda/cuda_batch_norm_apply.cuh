// Batch norm's step 3 on our own kernels: y (forward) or dx (backward) elementwise from x, dy
// and the per-channel coefficients steps 1 and 2 made, with the tails (residual, ReLU and its
// bits, a normalized residual). The math and the layout are in cuda_batch_norm_kernels.cuh.
#pragma once

#include "engine/backend/cuda/cuda_batch_norm_kernels.cuh"

// Included by cuda_batch_norm.cu alone (the launchers), hence the unnamed namespace.
namespace dlbench::backend::cuda {
namespace {

// Step 3, forward: y = (x - mean) scale + beta. Each thread keeps its channels' coefficients
// in registers and strides down the rows; with `reverse`, row r is row rows - 1 - r (the L2
// order of cuda_batch_norm.cu). With `fold` (sums the convolution made), each thread turns its
// channels' sums into the coefficients itself, as bn_forward_finalize_kernel would have, and the
// first row of blocks writes the statistics: one launch instead of two.
template <class T, int kVec, bool kTail, int kRows = kApplyRows, int kMinBlocks = kMinBlocksPerSm,
          bool kFold = false>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    bn_forward_apply_kernel(const T* x, const float* coef, std::int64_t rows, std::int64_t channels,
                            ForwardTail<T> tail, T* y, bool reverse = false,
                            FoldedStatistics fold = {}) {
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  if (c0 >= channels) return;
  float mean[kVec], scale[kVec], beta[kVec];
  float mean2[kVec] = {}, scale2[kVec] = {}, beta2[kVec] = {};  // the residual's, if normalized
  const bool writes = blockIdx.y == 0 && threadIdx.y == 0;      // the statistics, when folded
  if constexpr (kFold) {
    fold_coefficients<kVec>(fold.sums, fold.ch, fold.p, rows, channels, c0, writes, mean, scale,
                            beta);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      mean[j] = coef[c0 + j], scale[j] = coef[channels + c0 + j],
      beta[j] = coef[2 * channels + c0 + j];
  }
  if constexpr (kTail) {
    if (kFold && fold.residual_sums != nullptr) {
      fold_coefficients<kVec>(fold.residual_sums, fold.residual_ch, fold.p, rows, channels, c0,
                              writes, mean2, scale2, beta2);
    } else if (tail.residual_coef != nullptr) {
      const float* rc = tail.residual_coef;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        mean2[j] = rc[c0 + j], scale2[j] = rc[channels + c0 + j],
        beta2[j] = rc[2 * channels + c0 + j];
    }
  }
  const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  const bool residual = kTail && tail.residual != nullptr;
  const bool normed_residual =
      tail.residual_coef != nullptr || (kFold && fold.residual_sums != nullptr);
  for (std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
       r0 < rows; r0 += kRows * step) {
    Pack<T, kVec> xp[kRows] = {}, rp[kRows] = {};
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const std::int64_t r = r0 + k * step;
      if (r >= rows) continue;
      const std::int64_t rr = reverse ? rows - 1 - r : r;
      xp[k] = load_pack<T, kVec>(x + rr * channels + c0);
      if (residual) rp[k] = load_pack<T, kVec>(tail.residual + rr * channels + c0);
    }
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const std::int64_t r = r0 + k * step;
      if (r >= rows) continue;
      const std::int64_t i = (reverse ? rows - 1 - r : r) * channels + c0;
      float v[kVec];
      unpack<T, kVec>(xp[k], v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[j] = fmaf(v[j] - mean[j], scale[j], beta[j]);
      if constexpr (kTail) {
        if (residual) {
          float add[kVec];
          unpack<T, kVec>(rp[k], add);
          if (normed_residual) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) add[j] = fmaf(add[j] - mean2[j], scale2[j], beta2[j]);
          }
#pragma unroll
          for (int j = 0; j < kVec; ++j) v[j] += add[j];
        }
        if (tail.relu) {
          unsigned bits = 0;
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            if (v[j] > 0.0f) bits |= 1u << j;
            v[j] = fmaxf(v[j], 0.0f);
          }
          if (tail.mask != nullptr) store_mask<kVec>(tail.mask, i, bits);
        }
      }
      store<T, kVec>(y + i, v);
    }
  }
}

// Step 3, backward: dx (+)= a (dy - k2 - (x - mean) k3), dy masked by the ReLU's bits first.
template <class T, int kVec, bool kTail, int kRows = kApplyRows, int kMinBlocks = kMinBlocksPerSm>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    bn_backward_apply_kernel(const T* x, const T* dy, const float* coef, std::int64_t rows,
                             std::int64_t channels, bool accumulate, BackwardTail<T> tail, T* dx) {
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  if (c0 >= channels) return;
  float mean[kVec], a[kVec], k2[kVec], k3[kVec];
  // The residual's batch norm's coefficients, where it has one (loaded with the tail's).
  float mean2[kVec] = {}, a2[kVec] = {}, k22[kVec] = {}, k32[kVec] = {};
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    mean[j] = coef[c0 + j], a[j] = coef[channels + c0 + j];
    k2[j] = coef[2 * channels + c0 + j], k3[j] = coef[3 * channels + c0 + j];
  }
  if constexpr (kTail) {
    if (tail.residual_coef != nullptr) {
      const float* rc = tail.residual_coef;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        mean2[j] = rc[c0 + j], a2[j] = rc[channels + c0 + j];
        k22[j] = rc[2 * channels + c0 + j], k32[j] = rc[3 * channels + c0 + j];
      }
    }
  }
  const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  const bool masked = kTail && tail.mask != nullptr;
  const bool normed_residual = kTail && tail.dresidual != nullptr && tail.residual_coef != nullptr;
  for (std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
       r0 < rows; r0 += kRows * step) {
    // x, dy, the mask and a normalized residual's input loaded ahead; what is only read when
    // accumulating (rare: a tensor with two consumers) is read where it is used.
    Pack<T, kVec> xp[kRows] = {}, gp[kRows] = {}, rp[kRows] = {};
    unsigned char mp[kRows] = {};
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const std::int64_t r = r0 + k * step;
      if (r >= rows) continue;
      const std::int64_t i = r * channels + c0;
      xp[k] = load_pack<T, kVec>(x + i);
      gp[k] = load_pack<T, kVec>(dy + i);
      if (masked) mp[k] = tail.mask[i / 8];
      if (normed_residual) rp[k] = load_pack<T, kVec>(tail.residual + i);
    }
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const std::int64_t r = r0 + k * step;
      if (r >= rows) continue;
      const std::int64_t i = r * channels + c0;
      float xv[kVec], g[kVec], old[kVec] = {};
      unpack<T, kVec>(xp[k], xv);
      unpack<T, kVec>(gp[k], g);
      if constexpr (kTail) {
        if (masked) mask_gradient<kVec>(mp[k], i, g);
        if (tail.dresidual != nullptr) {
          float dr[kVec] = {};
          if (tail.accumulate_residual) load<T, kVec>(tail.dresidual + i, dr);
          if (normed_residual) {
            float rv[kVec];
            unpack<T, kVec>(rp[k], rv);
#pragma unroll
            for (int j = 0; j < kVec; ++j)
              dr[j] += a2[j] * (g[j] - k22[j] - (rv[j] - mean2[j]) * k32[j]);
          } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) dr[j] += g[j];
          }
          store<T, kVec>(tail.dresidual + i, dr);
        }
      }
      if (accumulate) load<T, kVec>(dx + i, old);
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        xv[j] = old[j] + a[j] * (g[j] - k2[j] - (xv[j] - mean[j]) * k3[j]);
      store<T, kVec>(dx + i, xv);
    }
  }
}

}  // namespace
}  // namespace dlbench::backend::cuda
