// Fused attention (cuda_flash_attention.h), FlashAttention-2's scheme on tensor cores through
// WMMA, f32 accumulation:
//   forward:  a block per 64 queries of one (sample, head), 4 warps of 16 rows; key tiles of 64
//             stream through shared memory; each warp keeps its rows' running max and sum and
//             rescales its output rows as the max grows; o = sum / l, stats = max + log l.
//   backward: a block per 64 keys; query tiles stream through; P is recomputed from the stats,
//             dV += P^T dO and dK += dS^T Q stay in registers, dQ += dS K is added into an f32
//             buffer with atomics (summed in whatever order the blocks run: the fused path's
//             dq is not bit-reproducible, as flash kernels' are not), then rounded in one pass.
// P and dS are rounded to the dtype before their products, as the unfused path rounds them.
#include "engine/backend/cuda/cuda_flash_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <atomic>
#include <cmath>

#include "engine/backend/attention_mask.h"
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

using namespace nvcuda;

constexpr int kTile = 64;  // queries per forward block, keys per backward block, and each step
constexpr int kWarps = 4;  // of 16 rows each
constexpr int kThreads = kWarps * kWarp;

struct FlashShape {
  std::int64_t heads, seq_q, seq_kv, width;  // width: heads * head_dim, a token row's columns
  float scale;
  bool causal;
  const std::int32_t *q_lengths, *kv_lengths;
};

// Rows [row0, row0 + kTile) of head h of sample n of a [batch * seq, width] tensor into a
// [kTile][D] tile, zeros past the sequence, 16 bytes at a time.
template <class T, int D>
__device__ void load_tile(T (*tile)[D], const T* base, std::int64_t n, std::int64_t h,
                          std::int64_t row0, std::int64_t seq, std::int64_t width) {
  constexpr int kChunks = D * sizeof(T) / 16;
  for (int e = threadIdx.x; e < kTile * kChunks; e += kThreads) {
    const int r = e / kChunks, c = e % kChunks;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (row0 + r < seq)
      value = reinterpret_cast<const uint4*>(base + (n * seq + row0 + r) * width + h * D)[c];
    reinterpret_cast<uint4*>(&tile[r][0])[c] = value;
  }
}

template <class T>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragAt = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major>;
template <class T>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;
using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// out[16][kTile] (f32, ld kTile) = a[16][D] b^T for b [kTile][D], both row-major tiles.
template <class T, int D>
__device__ void rows_times_tile_t(const T* a, const T (*b)[D], float* out) {
  for (int c = 0; c < kTile / 16; ++c) {
    Acc acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < D / 16; ++kk) {
      FragA<T> fa;
      FragBt<T> fb;
      wmma::load_matrix_sync(fa, a + kk * 16, D);
      wmma::load_matrix_sync(fb, &b[c * 16][kk * 16], D);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out + c * 16, acc, kTile, wmma::mem_row_major);
  }
}

template <class T, int D>
struct ForwardTiles {
  T q[kTile][D], k[kTile][D], v[kTile][D];
  float s[kWarps][16][kTile];
  T p[kWarps][16][kTile];
  float o[kWarps][16][D];
  float max[kWarps][16], sum[kWarps][16], rescale[kWarps][16];
};

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_forward(const T* q, const T* k, const T* v, T* o, float* stats, FlashShape sh) {
  extern __shared__ __align__(128) unsigned char raw[];
  auto& t = *reinterpret_cast<ForwardTiles<T, D>*>(raw);
  const std::int64_t n = blockIdx.y / sh.heads, h = blockIdx.y % sh.heads;
  const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const std::int64_t q_len = clamp_length(sh.q_lengths, n, sh.seq_q);
  const std::int64_t kv_len = clamp_length(sh.kv_lengths, n, sh.seq_kv);
  load_tile<T, D>(t.q, q, n, h, q0, sh.seq_q, sh.width);
  for (int e = threadIdx.x; e < kWarps * 16 * D; e += kThreads) (&t.o[0][0][0])[e] = 0.0f;
  if (threadIdx.x < kWarps * 16) {
    (&t.max[0][0])[threadIdx.x] = -INFINITY;
    (&t.sum[0][0])[threadIdx.x] = 0.0f;
  }
  // The keys any of the block's queries sees: its last query's, the most.
  const std::int64_t last = (q0 + kTile < q_len ? q0 + kTile : q_len) - 1;
  const std::int64_t keys = last < q0 ? 0 : visible_keys(last, q_len, kv_len, sh.causal);
  // Lane pairs own a row: lane / 2 its row in the warp's 16, lane % 2 a half of the key tile.
  const int r = lane / 2, half = lane % 2;
  const std::int64_t i = q0 + warp * 16 + r;
  const std::int64_t row_keys = i < sh.seq_q ? visible_keys(i, q_len, kv_len, sh.causal) : 0;
  for (std::int64_t k0 = 0; k0 < keys; k0 += kTile) {
    __syncthreads();  // the previous tiles are used up (and the first load is done)
    load_tile<T, D>(t.k, k, n, h, k0, sh.seq_kv, sh.width);
    load_tile<T, D>(t.v, v, n, h, k0, sh.seq_kv, sh.width);
    __syncthreads();
    rows_times_tile_t<T, D>(&t.q[warp * 16][0], t.k, &t.s[warp][0][0]);
    __syncwarp();
    float x[kTile / 2];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kTile / 2; ++c) {
      const int col = half * (kTile / 2) + c;
      x[c] = k0 + col < row_keys ? sh.scale * t.s[warp][r][col] : -INFINITY;
      tile_max = fmaxf(tile_max, x[c]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float old_max = t.max[warp][r];
    const float new_max = fmaxf(old_max, tile_max);
    float tile_sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kTile / 2; ++c) {
      const float pv = new_max == -INFINITY ? 0.0f : expf(x[c] - new_max);
      tile_sum += pv;
      t.p[warp][r][half * (kTile / 2) + c] = from_f32<T>(pv);
    }
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
    __syncwarp();
    if (half == 0) {
      const float factor = old_max == -INFINITY ? 0.0f : expf(old_max - new_max);
      t.rescale[warp][r] = factor;
      t.sum[warp][r] = t.sum[warp][r] * factor + tile_sum;
      t.max[warp][r] = new_max;
    }
    __syncwarp();
    for (int e = lane; e < 16 * D; e += kWarp) t.o[warp][e / D][e % D] *= t.rescale[warp][e / D];
    __syncwarp();
    for (int cc = 0; cc < D / 16; ++cc) {
      Acc acc;
      wmma::load_matrix_sync(acc, &t.o[warp][0][cc * 16], D, wmma::mem_row_major);
      for (int kk = 0; kk < kTile / 16; ++kk) {
        FragA<T> fa;
        FragB<T> fb;
        wmma::load_matrix_sync(fa, &t.p[warp][0][kk * 16], kTile);
        wmma::load_matrix_sync(fb, &t.v[kk * 16][cc * 16], D);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(&t.o[warp][0][cc * 16], acc, D, wmma::mem_row_major);
    }
    __syncwarp();
  }
  __syncthreads();
  for (int e = lane; e < 16 * D; e += kWarp) {
    const int row = e / D, col = e % D;
    const std::int64_t qi = q0 + warp * 16 + row;
    if (qi >= sh.seq_q) continue;
    const float l = t.sum[warp][row];
    o[(n * sh.seq_q + qi) * sh.width + h * D + col] =
        from_f32<T>(l > 0.0f ? t.o[warp][row][col] / l : 0.0f);
  }
  if (lane < 16) {
    const std::int64_t qi = q0 + warp * 16 + lane;
    const float l = t.sum[warp][lane];
    if (qi < sh.seq_q)
      stats[(n * sh.heads + h) * sh.seq_q + qi] = l > 0.0f ? t.max[warp][lane] + logf(l) : 0.0f;
  }
}

// delta[(n, h, i)] = sum_c dout[i, c] o[i, c] over the head's columns, a warp per row.
template <class T>
__global__ void output_dots(const T* dout, const T* o, float* delta, FlashShape sh,
                            std::int64_t head_dim, std::int64_t rows) {
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= rows) return;
  const std::int64_t i = row % sh.seq_q, h = row / sh.seq_q % sh.heads,
                     n = row / sh.seq_q / sh.heads;
  const std::int64_t at = (n * sh.seq_q + i) * sh.width + h * head_dim;
  float sum = 0.0f;
  for (std::int64_t c = threadIdx.x % kWarp; c < head_dim; c += kWarp)
    sum += to_f32(dout[at + c]) * to_f32(o[at + c]);
  sum = warp_reduce(sum, Add{});
  if (threadIdx.x % kWarp == 0) delta[row] = sum;
}

template <class T, int D>
struct BackwardTiles {
  T k[kTile][D], v[kTile][D], q[kTile][D], dout[kTile][D];
  float s[kTile][kTile], dp[kTile][kTile];
  T p[kTile][kTile], ds[kTile][kTile];
  float out[kWarps][16][D];  // a warp's f32 rows on their way out
  float lse[kTile], delta[kTile];
};

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward(const T* q, const T* k, const T* v, const T* dout, const float* stats,
                   const float* delta, float* dq_sum, T* dk, T* dv, FlashShape sh,
                   bool accumulate) {
  extern __shared__ __align__(128) unsigned char raw[];
  auto& t = *reinterpret_cast<BackwardTiles<T, D>*>(raw);
  const std::int64_t n = blockIdx.y / sh.heads, h = blockIdx.y % sh.heads;
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const std::int64_t q_len = clamp_length(sh.q_lengths, n, sh.seq_q);
  const std::int64_t kv_len = clamp_length(sh.kv_lengths, n, sh.seq_kv);
  Acc dk_acc[D / 16], dv_acc[D / 16];
#pragma unroll
  for (int cc = 0; cc < D / 16; ++cc) {
    wmma::fill_fragment(dk_acc[cc], 0.0f);
    wmma::fill_fragment(dv_acc[cc], 0.0f);
  }
  load_tile<T, D>(t.k, k, n, h, j0, sh.seq_kv, sh.width);
  load_tile<T, D>(t.v, v, n, h, j0, sh.seq_kv, sh.width);
  // Queries from the first whose causal window reaches the tile; none when no key is visible.
  const std::int64_t first = j0 >= kv_len ? q_len : (sh.causal ? j0 / kTile * kTile : 0);
  for (std::int64_t i0 = first; i0 < q_len; i0 += kTile) {
    __syncthreads();
    load_tile<T, D>(t.q, q, n, h, i0, sh.seq_q, sh.width);
    load_tile<T, D>(t.dout, dout, n, h, i0, sh.seq_q, sh.width);
    for (int r = threadIdx.x; r < kTile; r += kThreads) {
      const bool in = i0 + r < sh.seq_q;
      t.lse[r] = in ? stats[(n * sh.heads + h) * sh.seq_q + i0 + r] : 0.0f;
      t.delta[r] = in ? delta[(n * sh.heads + h) * sh.seq_q + i0 + r] : 0.0f;
    }
    __syncthreads();
    rows_times_tile_t<T, D>(&t.q[warp * 16][0], t.k, &t.s[warp * 16][0]);
    rows_times_tile_t<T, D>(&t.dout[warp * 16][0], t.v, &t.dp[warp * 16][0]);
    __syncwarp();
    for (int e = lane; e < 16 * kTile; e += kWarp) {
      const int row = warp * 16 + e / kTile, col = e % kTile;
      const std::int64_t i = i0 + row;
      const std::int64_t seen = i < sh.seq_q ? visible_keys(i, q_len, kv_len, sh.causal) : 0;
      const float pv = j0 + col < seen ? expf(sh.scale * t.s[row][col] - t.lse[row]) : 0.0f;
      t.p[row][col] = from_f32<T>(pv);
      t.ds[row][col] = from_f32<T>(pv * (t.dp[row][col] - t.delta[row]));
    }
    __syncthreads();
    // This warp's 16 keys: dV += P^T dO, dK += dS^T Q (the scale applied at the end).
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      FragAt<T> pt, dst;
      wmma::load_matrix_sync(pt, &t.p[kk * 16][warp * 16], kTile);
      wmma::load_matrix_sync(dst, &t.ds[kk * 16][warp * 16], kTile);
#pragma unroll
      for (int cc = 0; cc < D / 16; ++cc) {
        FragB<T> fdo, fq;
        wmma::load_matrix_sync(fdo, &t.dout[kk * 16][cc * 16], D);
        wmma::load_matrix_sync(fq, &t.q[kk * 16][cc * 16], D);
        wmma::mma_sync(dv_acc[cc], pt, fdo, dv_acc[cc]);
        wmma::mma_sync(dk_acc[cc], dst, fq, dk_acc[cc]);
      }
    }
    // This warp's 16 queries: dQ += dS K, into the f32 sum.
    for (int cc = 0; cc < D / 16; ++cc) {
      Acc acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < kTile / 16; ++kk) {
        FragA<T> fds;
        FragB<T> fk;
        wmma::load_matrix_sync(fds, &t.ds[warp * 16][kk * 16], kTile);
        wmma::load_matrix_sync(fk, &t.k[kk * 16][cc * 16], D);
        wmma::mma_sync(acc, fds, fk, acc);
      }
      wmma::store_matrix_sync(&t.out[warp][0][cc * 16], acc, D, wmma::mem_row_major);
    }
    __syncwarp();
    for (int e = lane; e < 16 * D; e += kWarp) {
      const std::int64_t i = i0 + warp * 16 + e / D;
      if (i < q_len)
        atomicAdd(&dq_sum[(n * sh.seq_q + i) * sh.width + h * D + e % D],
                  t.out[warp][e / D][e % D]);
    }
  }
  // dK and dV of this warp's 16 keys, out through its f32 rows.
  auto write_out = [&](Acc(&acc)[D / 16], T* grad, float factor) {
    __syncwarp();
#pragma unroll
    for (int cc = 0; cc < D / 16; ++cc) {
      for (int x = 0; x < acc[cc].num_elements; ++x) acc[cc].x[x] *= factor;
      wmma::store_matrix_sync(&t.out[warp][0][cc * 16], acc[cc], D, wmma::mem_row_major);
    }
    __syncwarp();
    for (int e = lane; e < 16 * D; e += kWarp) {
      const std::int64_t j = j0 + warp * 16 + e / D;
      if (j >= sh.seq_kv) continue;
      T& g = grad[(n * sh.seq_kv + j) * sh.width + h * D + e % D];
      g = from_f32<T>(t.out[warp][e / D][e % D] + (accumulate ? to_f32(g) : 0.0f));
    }
  };
  write_out(dk_acc, dk, sh.scale);
  write_out(dv_acc, dv, 1.0f);
}

// dq (+)= scale * the f32 sum.
template <class T>
__global__ void finish_dq(const float* dq_sum, T* dq, std::int64_t count, float scale,
                          bool accumulate) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= count) return;
  dq[e] = from_f32<T>(scale * dq_sum[e] + (accumulate ? to_f32(dq[e]) : 0.0f));
}

FlashShape flash_shape(const AttentionParams& p, const std::int32_t* q_lengths,
                       const std::int32_t* kv_lengths) {
  return {p.heads, p.seq_q, p.seq_kv, p.width(), p.scale, p.causal, q_lengths, kv_lengths};
}

// Calls f(TypeTag<T>, integral_constant<int, D>) for the call's dtype and head width.
template <class F>
void dispatch_flash(const AttentionParams& p, DType dtype, F&& f) {
  dispatch_float(dtype, "attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, float>) {
      if (p.head_dim == 32) return f(tag, std::integral_constant<int, 32>{});
      if (p.head_dim == 64) return f(tag, std::integral_constant<int, 64>{});
      if (p.head_dim == 128) return f(tag, std::integral_constant<int, 128>{});
    }
    throw Error(ErrorKind::kInternal, "fused attention: no kernel for this dtype and head width");
  });
}

// Raises a kernel's dynamic shared memory limit to what it asks, once per kernel and device.
template <auto Kernel>
void allow_shared(std::size_t bytes) {
  static std::atomic<std::uint64_t> devices{0};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::uint64_t bit = std::uint64_t{1} << (device % 64);
  if (devices.load() & bit) return;
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  devices.fetch_or(bit);
}

}  // namespace

bool flash_attention_applies(const AttentionParams& p,
                             std::initializer_list<const Tensor*> operands, bool backward) {
  const DType dtype = (*operands.begin())->dtype();
  const bool kernel = (dtype == DType::kF16 || dtype == DType::kBF16) &&
                      (p.head_dim == 32 || p.head_dim == 64 || p.head_dim == 128);
  if (!kernel || p.batch * p.heads > 65535) return false;  // gridDim.y's limit
  for (const Tensor* t : operands)
    if (!aligned16(t->data())) return false;
  // Head width 128 asks more shared memory than some GPUs give a block.
  std::size_t bytes = 0;
  dispatch_flash(p, dtype, [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    constexpr int D = decltype(width)::value;
    bytes = backward ? sizeof(BackwardTiles<T, D>) : sizeof(ForwardTiles<T, D>);
  });
  int device = 0, limit = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes <= static_cast<std::size_t>(limit);
}

void flash_attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                             const Tensor& v, const std::int32_t* q_lengths,
                             const std::int32_t* kv_lengths, const Tensor& o, float* stats,
                             cudaStream_t stream) {
  const FlashShape sh = flash_shape(p, q_lengths, kv_lengths);
  dispatch_flash(p, q.dtype(), [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    constexpr int D = decltype(width)::value;
    const std::size_t bytes = sizeof(ForwardTiles<T, D>);
    allow_shared<flash_forward<T, D>>(bytes);
    const dim3 grid(static_cast<unsigned>((p.seq_q + kTile - 1) / kTile),
                    static_cast<unsigned>(p.batch * p.heads));
    flash_forward<T, D><<<grid, kThreads, bytes, stream>>>(
        q.data_as<T>(), k.data_as<T>(), v.data_as<T>(), o.data_as<T>(), stats, sh);
  });
  CUDA_CHECK_LAUNCH();
}

std::size_t flash_attention_backward_workspace(const AttentionParams& p) {
  return align_up(static_cast<std::size_t>(p.batch * p.seq_q * p.width()) * sizeof(float)) +
         align_up(static_cast<std::size_t>(p.batch * p.heads * p.seq_q) * sizeof(float));
}

void flash_attention_backward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& o, const Tensor& dout,
                              const float* stats, const std::int32_t* q_lengths,
                              const std::int32_t* kv_lengths, const Tensor& dq, const Tensor& dk,
                              const Tensor& dv, GradMode mode, void* workspace,
                              cudaStream_t stream) {
  const FlashShape sh = flash_shape(p, q_lengths, kv_lengths);
  const std::int64_t dq_count = p.batch * p.seq_q * p.width();
  auto* dq_sum = static_cast<float*>(workspace);
  auto* delta = reinterpret_cast<float*>(static_cast<char*>(workspace) +
                                         align_up(static_cast<std::size_t>(dq_count) * 4));
  const bool accumulate = mode == GradMode::kAccumulate;
  CUDA_CHECK(cudaMemsetAsync(dq_sum, 0, static_cast<std::size_t>(dq_count) * 4, stream));
  dispatch_flash(p, q.dtype(), [&](auto tag, auto width) {
    using T = typename decltype(tag)::type;
    constexpr int D = decltype(width)::value;
    const std::int64_t rows = p.batch * p.heads * p.seq_q;
    output_dots<T><<<warp_row_blocks(rows), kBlock, 0, stream>>>(dout.data_as<T>(), o.data_as<T>(),
                                                                 delta, sh, p.head_dim, rows);
    const std::size_t bytes = sizeof(BackwardTiles<T, D>);
    allow_shared<flash_backward<T, D>>(bytes);
    const dim3 grid(static_cast<unsigned>((p.seq_kv + kTile - 1) / kTile),
                    static_cast<unsigned>(p.batch * p.heads));
    flash_backward<T, D><<<grid, kThreads, bytes, stream>>>(
        q.data_as<T>(), k.data_as<T>(), v.data_as<T>(), dout.data_as<T>(), stats, delta, dq_sum,
        dk.data_as<T>(), dv.data_as<T>(), sh, accumulate);
    finish_dq<T><<<static_cast<unsigned>((dq_count + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
        dq_sum, dq.data_as<T>(), dq_count, p.scale, accumulate);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda
