// Batch norm on our own kernels over x viewed as [rows, channels] (an NHWC tensor's N*H*W rows).
//
// Training:  mean_c = (1/R) sum_r x[r, c],  var_c = (1/R) sum_r (x[r, c] - mean_c)^2  (biased)
//            y = gamma_c (x - mean_c) inv_std_c + beta_c,  inv_std_c = 1 / sqrt(var_c + eps)
//            running_mean = (1 - m) running_mean + m mean
//            running_var  = (1 - m) running_var  + m var R / (R - 1)   (unbiased, as PyTorch)
// Inference: the same normalization with the running statistics.
// Backward:  xhat = (x - mean) inv_std
//            dbeta_c = sum_r dy,  dgamma_c = sum_r dy xhat = inv_std_c sum_r dy (x - mean_c)
//            dx = gamma_c inv_std_c (dy - dbeta_c / R - xhat dgamma_c / R)
//
// NHWC puts a row's channels side by side, so a thread owns kVec neighbouring channels (one
// 16-byte load) and walks down the rows; a warp reads whole rows, contiguous memory. Each op is
// three kernels, and every sum runs in an order fixed by the shape alone (no atomics), so results
// are the same from run to run:
//   1. partial: block (tile, chunk) sums a chunk of rows for a tile of channels, each thread
//      in f32 over its rows, then a fixed tree over the block's threads: one partial per chunk;
//   2. finalize: per channel, adds the chunks' partials in f64 (fixed lanes, fixed tree) and
//      turns them into the statistics, the gradients of gamma and beta, and per-channel
//      coefficients for step 3;
//   3. apply: y (or dx) elementwise from x (and dy) and the coefficients
//      (cuda_batch_norm_apply.cuh).
// Where the convolution made the forward sums (ConvParams::statistics: one chunk, unshifted),
// forward apply does step 2 itself (fold_coefficients) and the op is that one kernel.
// The number of chunks depends on the shape, not on the GPU, so every GPU sums the same way.
//
// The tail (BatchNormParams::residual, ::activation): forward apply adds the residual and
// applies the ReLU before its one store, and writes the ReLU's bits (bit e % 8 of byte e / 8,
// the same memory as the i32 words of op_params.h on this little-endian GPU); backward reads
// the bits to zero dy where the ReLU did not pass, in both the partial sums and apply, and apply
// also writes that gradient to the residual. The tail needs channels % 8 == 0, so each byte of
// the mask lies in one row and is owned by the lanes of one group of neighbouring threads.
//
// A normalized residual (BatchNormParams::residual_norm, y = relu(bn(x) + bn'(r))) is a second
// batch norm in the same kernels: forward sums and finalizes each, and apply normalizes r on the
// fly instead of reading a stored bn'(r); backward's partial pass sums both batch norms' terms in
// one read of dy (dbeta' = dbeta), and apply writes dr beside dx. That saves writing and reading
// bn'(r) forward and, backward, the stored gradient of bn'(r) and a second read of dy.
//
// Variance from plain sums of x and x^2 cancels catastrophically when |mean| >> std, so the
// forward sums x - shift_c with shift_c = x[0, c], a sample of the channel: the sums then have
// the size of the spread and var = S2/R - (S1/R)^2 keeps its digits. Backward sums dy (x - mean)
// with the saved mean for the same reason. Memory traffic: forward reads x twice and writes y,
// backward reads x and dy twice and writes dx (3 and 5 passes over an activation).
#pragma once

#include "engine/backend/cuda/cuda_kernels.cuh"

// Included by cuda_batch_norm.cu alone (the launchers), hence the unnamed namespace.
namespace dlbench::backend::cuda {
namespace {

template <class T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

template <class T, int kVec>
__device__ __forceinline__ Pack<T, kVec> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, kVec>*>(p);
}

template <class T, int kVec>
__device__ __forceinline__ void unpack(const Pack<T, kVec>& pack, float (&out)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) out[j] = to_f32(pack.v[j]);
}

template <class T, int kVec>
__device__ __forceinline__ void load(const T* p, float (&out)[kVec]) {
  unpack<T, kVec>(load_pack<T, kVec>(p), out);
}

// How the streaming loops walk their rows: kRows rows per iteration, all loaded before the first
// is used (predicated on the row existing), and __launch_bounds__ asking for kMinBlocks blocks
// per SM. Both are template parameters so bench/scripts/bn_kernels_bench.cu can time other
// choices; the defaults are what measured fastest on an H200 (2026-11-28, R50 shapes at batch
// 256, docs/measurements/resnet-vgg.md): one row at a time for apply and the backward sums (more
// rows in flight cost registers, hence occupancy, and lost up to 40 %), four for the forward sums,
// which only read (15 % faster than one). One row without the old `#pragma unroll 4` was itself
// 10-19 % faster than the loop before it.
constexpr int kApplyRows = 1;
constexpr int kBackwardSumRows = 1;
constexpr int kForwardSumRows = 4;
constexpr int kMinBlocksPerSm = 1;

template <class T, int kVec>
__device__ __forceinline__ void store(T* p, const float (&in)[kVec]) {
  Pack<T, kVec> pack;
#pragma unroll
  for (int j = 0; j < kVec; ++j) pack.v[j] = from_f32<T>(in[j]);
  *reinterpret_cast<Pack<T, kVec>*>(p) = pack;
}

enum class SumKind { kForward, kBackward };

// --- the ReLU mask ---------------------------------------------------------------------------

// Writes the ReLU bits of elements e0 .. e0 + kVec - 1 (bit j of `bits` for element e0 + j).
// With fewer than 8 elements per thread, the kGroup neighbouring lanes that share a byte OR
// their bits together and the first writes it: they hold the same row and all run this.
template <int kVec>
__device__ __forceinline__ void store_mask(unsigned char* mask, std::int64_t e0, unsigned bits) {
  static_assert(kVec == 1 || kVec == 2 || kVec == 4 || kVec == 8, "a byte holds whole packs");
  if constexpr (kVec == 8) {
    mask[e0 / 8] = static_cast<unsigned char>(bits);
  } else {
    constexpr unsigned kGroup = 8 / kVec;
    const unsigned lane = (threadIdx.y * blockDim.x + threadIdx.x) % 32;
    const unsigned group = ((1u << kGroup) - 1) << (lane & ~(kGroup - 1));
    bits <<= static_cast<unsigned>(e0 % 8);
#pragma unroll
    for (unsigned k = 1; k < kGroup; k *= 2) bits |= __shfl_xor_sync(group, bits, k);
    if (e0 % 8 == 0) mask[e0 / 8] = static_cast<unsigned char>(bits);
  }
}

// g (the gradient of the ReLU's output) becomes the gradient of its input: 0 where it did not pass.
// `byte` is the mask byte holding element e0's bit (mask[e0 / 8], loaded ahead by the caller).
template <int kVec>
__device__ __forceinline__ void mask_gradient(unsigned char byte, std::int64_t e0,
                                              float (&g)[kVec]) {
  const unsigned bits = static_cast<unsigned>(byte) >> static_cast<unsigned>(e0 % 8);
#pragma unroll
  for (int j = 0; j < kVec; ++j)
    if (((bits >> j) & 1u) == 0) g[j] = 0.0f;
}

// What a forward apply adds after normalizing (BatchNormParams' tail).
template <class T>
struct ForwardTail {
  const T* residual;  // null without one
  bool relu;
  unsigned char* mask;  // null when the bits are not kept (inference)
  // The residual's own batch norm (p.residual_norm): its coefficients [mean, gamma inv_std,
  // beta] as forward finalize writes them; null to add the residual as it is.
  const float* residual_coef;
};

// What a backward apply does besides dx: the residual's gradient (null without one). With the
// residual's own batch norm, that gradient goes through it: from the residual itself and the
// coefficients its backward finalize wrote (null without one).
template <class T>
struct BackwardTail {
  const unsigned char* mask;  // null without a ReLU
  T* dresidual;
  bool accumulate_residual;
  const T* residual;
  const float* residual_coef;
};

// Blocks of the partial kernel: a shape-only number, so the summation order is the same on
// every GPU; 1024 are about one wave on an H100 (132 SMs), enough to keep its memory busy. The
// forward sums (bf16, TF32 and f32: f16 takes them from the convolution) read x alone and do
// best with half the blocks of the backward sums, which read x and dy. H200, ResNet-50 at batch
// 256, one call (2026-12-01), bf16 median step with the forward at 1024 / 512 / 256 blocks:
// 32.07, 32.02 / 31.80, 31.84 / 31.95, 31.97 ms; fp16's backward at 512 was within noise.
constexpr std::int64_t kForwardPartialBlocks = 512;
constexpr std::int64_t kBackwardPartialBlocks = 1024;
constexpr std::int64_t kMaxChunks = 65535;  // gridDim.y
// Finalize: kLanes channels per block, kLanes lanes splitting the chunks (lane_column_sums).
// Per-channel coefficients in the workspace, ahead of the partials (see the finalize kernels).
constexpr std::int64_t kCoefficients = 4;

// --- launch geometry (the launchers' and bench/scripts/bn_kernels_bench.cu's) ----------------

// Threads across the channel packs (a power of two up to a warp, no wider than the row) and
// the rest of the block down the rows, so a warp reads contiguous rows even for 64 channels.
struct Tiling {
  dim3 block;
  unsigned tiles;          // blocks across the channels
  std::int64_t row_steps;  // rows / blockDim.y, rounded up
};

inline Tiling tiling(const BatchNormParams& p, int vec) {
  const std::int64_t packs = (p.channels + vec - 1) / vec;
  unsigned across = 1;
  while (across < packs && across < 32) across *= 2;
  const unsigned down = kBlock / across;
  return {dim3(across, down), static_cast<unsigned>((packs + across - 1) / across),
          (p.rows + down - 1) / down};
}

struct Chunking {
  std::int64_t chunks, rows_per_chunk;
};

// Chunks of rows for `blocks` partial-kernel blocks in all.
inline Chunking chunking(const BatchNormParams& p, const Tiling& t, std::int64_t blocks) {
  const std::int64_t wanted = std::clamp<std::int64_t>((blocks + t.tiles - 1) / t.tiles, 1,
                                                       std::min(t.row_steps, kMaxChunks));
  const std::int64_t rows_per_chunk = (p.rows + wanted - 1) / wanted;
  return {(p.rows + rows_per_chunk - 1) / rows_per_chunk, rows_per_chunk};
}

// Apply kernels stride down the rows in one wave: as many blocks as the GPU keeps `resident` at
// once (CudaBackend::resident_blocks). The grid used to be 8 blocks of 256 threads per SM, what the
// thread count alone allows, but the f16 tail kernels' registers leave room for 3 (forward) and 2
// (backward) blocks on an SM: the blocks then ran in several waves, a partial one among them in
// the forward, each block walking its fixed share of the rows. One wave measured 3-6 % faster
// per apply kernel on an H200 (docs/measurements/resnet-vgg.md, 2026-12-01).
inline dim3 apply_grid(const Tiling& t, int resident) {
  const std::int64_t down =
      std::clamp<std::int64_t>(resident / t.tiles, 1, std::min(t.row_steps, kMaxChunks));
  return dim3(t.tiles, static_cast<unsigned>(down));
}

// A normalized residual's share of a backward partial pass (p.residual_norm): its input and
// saved mean, and the partials of its own batch norm (laid out as `partial`).
template <class T>
struct ResidualSums {
  const T* x;
  const float* mean;
  float* partial;
};

// Step 1. Forward: a = sum (x - shift), b = sum (x - shift)^2, shift = x[0, c].
//         Backward: a = sum dy, b = sum dy (x - mean); with kPair also the residual's
//         b' = sum dy (r - mean'), its partials holding a (its dbeta's sum too) and b'.
// partial is [chunks][2][channels]. blockDim.x threads across channel packs, blockDim.y (a
// power of two) down the rows. With `reverse` the blocks take the chunks last to first (the L2
// order of cuda_batch_norm.cu); each chunk's sums still go to its own slot.
template <class T, int kVec, SumKind kKind, bool kRelu = false, bool kPair = false,
          int kRows = kKind == SumKind::kForward ? kForwardSumRows : kBackwardSumRows,
          int kMinBlocks = kMinBlocksPerSm>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    bn_partial_kernel(const T* x, const T* dy, const float* mean, const unsigned char* mask,
                      std::int64_t rows, std::int64_t channels, std::int64_t rows_per_chunk,
                      float* partial, ResidualSums<T> pair = {}, bool reverse = false) {
  static_assert(!kPair || kKind == SumKind::kBackward, "a pair of sums is backward's");
  constexpr int kSums = kPair ? 3 : 2;
  __shared__ float sums[kSums][kVec][kBlock];
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  const bool active = c0 < channels;
  const std::int64_t chunk = reverse ? gridDim.y - 1 - blockIdx.y : blockIdx.y;
  const std::int64_t begin = chunk * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  float a[kVec] = {}, b[kVec] = {}, center[kVec] = {};
  float b2[kVec] = {}, center2[kVec] = {};  // the residual's (kPair)
  if (active) {
    if constexpr (kKind == SumKind::kForward) {
      load<T, kVec>(x + c0, center);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) center[j] = mean[c0 + j];
      if constexpr (kPair) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) center2[j] = pair.mean[c0 + j];
      }
    }
    for (std::int64_t r0 = begin + threadIdx.y; r0 < end; r0 += kRows * blockDim.y) {
      Pack<T, kVec> xp[kRows] = {}, gp[kRows] = {}, rp[kRows] = {};
      unsigned char mp[kRows] = {};
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        const std::int64_t r = r0 + k * static_cast<std::int64_t>(blockDim.y);
        if (r >= end) continue;
        const std::int64_t e = r * channels + c0;
        xp[k] = load_pack<T, kVec>(x + e);
        if constexpr (kKind == SumKind::kBackward) {
          gp[k] = load_pack<T, kVec>(dy + e);
          if constexpr (kRelu) mp[k] = mask[e / 8];
          if constexpr (kPair) rp[k] = load_pack<T, kVec>(pair.x + e);
        }
      }
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        const std::int64_t r = r0 + k * static_cast<std::int64_t>(blockDim.y);
        if (r >= end) continue;
        float xv[kVec];
        unpack<T, kVec>(xp[k], xv);
        if constexpr (kKind == SumKind::kForward) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            const float d = xv[j] - center[j];
            a[j] += d;
            b[j] = fmaf(d, d, b[j]);
          }
        } else {
          float g[kVec];
          unpack<T, kVec>(gp[k], g);
          if constexpr (kRelu) mask_gradient<kVec>(mp[k], r * channels + c0, g);
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            a[j] += g[j];
            b[j] = fmaf(g[j], xv[j] - center[j], b[j]);
          }
          if constexpr (kPair) {
            float rv[kVec];
            unpack<T, kVec>(rp[k], rv);
#pragma unroll
            for (int j = 0; j < kVec; ++j) b2[j] = fmaf(g[j], rv[j] - center2[j], b2[j]);
          }
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    sums[0][j][t] = a[j], sums[1][j][t] = b[j];
    if constexpr (kPair) sums[2][j][t] = b2[j];
  }
  __syncthreads();
  // A fixed tree over the rows of threads: row y adds row y + half.
  for (int half = blockDim.y / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.y) < half) {
      const int other = t + half * blockDim.x;
#pragma unroll
      for (int k = 0; k < kSums; ++k)
#pragma unroll
        for (int j = 0; j < kVec; ++j) sums[k][j][t] += sums[k][j][other];
    }
    __syncthreads();
  }
  if (threadIdx.y == 0 && active) {
    const std::int64_t at = chunk * 2 * channels + c0;
    float* out = partial + at;
#pragma unroll
    for (int j = 0; j < kVec; ++j) out[j] = sums[0][j][t], out[channels + j] = sums[1][j][t];
    if constexpr (kPair) {
      float* out2 = pair.partial + at;
#pragma unroll
      for (int j = 0; j < kVec; ++j) out2[j] = sums[0][j][t], out2[channels + j] = sums[2][j][t];
    }
  }
}

struct ChunkSums {
  double a, b;
};

// Step 2's sums for channel blockIdx.x * kLanes + threadIdx.x, in double: lane_column_sums over
// the chunks' (a, b) pairs. Block (kLanes, kLanes).
__device__ ChunkSums sum_chunks(const float* partial, std::int64_t chunks, std::int64_t channels) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  const LaneSums<double, 2> s = lane_column_sums<double,
                                                 2>(chunks, c < channels, [&](std::int64_t k) {
    return LaneSums<float, 2>{{partial[2 * k * channels + c], partial[(2 * k + 1) * channels + c]}};
  });
  return {s.v[0], s.v[1]};
}

struct ForwardChannels {
  const float* gamma;
  const float* beta;
  float* saved_mean;
  float* saved_inv_std;
  float* running_mean;
  float* running_var;
};

// Statistics, running statistics, and coefficients [mean, gamma inv_std, beta] for apply, from
// the partial sums of x shifted by its first row.
template <class T>
__global__ void bn_forward_finalize_kernel(const float* partial, std::int64_t chunks, const T* x,
                                           std::int64_t rows, std::int64_t channels,
                                           BatchNormParams p, ForwardChannels ch, float* coef) {
  const ChunkSums s = sum_chunks(partial, chunks, channels);
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  if (threadIdx.y != 0 || c >= channels) return;
  const double n = static_cast<double>(rows);
  const double offset = s.a / n;
  const double shift = static_cast<double>(to_f32(x[c]));
  const float mean = static_cast<float>(shift + offset);
  const float var = static_cast<float>(fmax(s.b / n - offset * offset, 0.0));
  const float inv_std = 1.0f / sqrtf(var + p.epsilon);
  // Bessel's correction for the running (unbiased) variance; one row has no spread to correct.
  const float unbias = rows > 1 ? static_cast<float>(n / (n - 1)) : 1.0f;
  const float m = p.momentum;
  ch.saved_mean[c] = mean;
  ch.saved_inv_std[c] = inv_std;
  ch.running_mean[c] = (1.0f - m) * ch.running_mean[c] + m * mean;
  ch.running_var[c] = (1.0f - m) * ch.running_var[c] + m * var * unbias;
  coef[c] = mean;
  coef[channels + c] = ch.gamma[c] * inv_std;
  coef[2 * channels + c] = ch.beta[c];
}

// What a forward apply needs to make its own coefficients from the convolution's sums (one
// chunk, unshifted), in place of bn_forward_finalize_kernel.
struct FoldedStatistics {
  const float* sums = nullptr;  // [2][channels]: sum x, sum x^2
  ForwardChannels ch = {};
  const float* residual_sums = nullptr;  // the residual's batch norm (p.residual_norm)
  ForwardChannels residual_ch = {};
  BatchNormParams p = {};
};

// bn_forward_finalize_kernel's arithmetic for channels c0 .. c0 + kVec - 1 from one chunk of
// unshifted sums (its double sum over one chunk is the float converted), so the coefficients and
// statistics are the same bits; `writes` says whether this thread stores the statistics. Written
// out, not shared with the finalize through a helper: every shared form tried (2026-12-01) made
// ptxas give the f16/bf16 tail kernel 84 registers instead of 80, which allocates as 88 and fits
// 2 blocks of 256 threads per SM instead of 3. A change to one must be made to the other.
template <int kVec>
__device__ __forceinline__ void fold_coefficients(const float* sums, const ForwardChannels& ch,
                                                  const BatchNormParams& p, std::int64_t rows,
                                                  std::int64_t channels, std::int64_t c0,
                                                  bool writes, float (&mean)[kVec],
                                                  float (&scale)[kVec], float (&beta)[kVec]) {
  const double n = static_cast<double>(rows);
  const float unbias = rows > 1 ? static_cast<float>(n / (n - 1)) : 1.0f;
  const float m = p.momentum;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const std::int64_t c = c0 + j;
    const double offset = static_cast<double>(sums[c]) / n;
    const float mu = static_cast<float>(offset);
    const float var = static_cast<float>(
        fmax(static_cast<double>(sums[channels + c]) / n - offset * offset, 0.0));
    const float inv_std = 1.0f / sqrtf(var + p.epsilon);
    mean[j] = mu, scale[j] = ch.gamma[c] * inv_std, beta[j] = ch.beta[c];
    if (writes) {
      ch.saved_mean[c] = mu;
      ch.saved_inv_std[c] = inv_std;
      ch.running_mean[c] = (1.0f - m) * ch.running_mean[c] + m * mu;
      ch.running_var[c] = (1.0f - m) * ch.running_var[c] + m * var * unbias;
    }
  }
}

// Inference coefficients from the running statistics.
__global__ void bn_inference_coefficients_kernel(const float* gamma, const float* beta,
                                                 const float* running_mean,
                                                 const float* running_var, std::int64_t channels,
                                                 float epsilon, float* coef) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  coef[c] = running_mean[c];
  coef[channels + c] = gamma[c] / sqrtf(running_var[c] + epsilon);
  coef[2 * channels + c] = beta[c];
}

// Batch norm folded into the weights [channels, per_channel] and bias of the op before it (see
// Backend::batch_norm_fold); one thread per weight, the first of each channel's row also writing
// its bias. Runs once per model, so plain loads.
struct FoldChannels {
  const float* gamma;
  const float* beta;
  const float* mean;
  const float* var;
};

template <class T>
__global__ void bn_fold_kernel(const T* w, const T* bias, FoldChannels bn, std::int64_t channels,
                               std::int64_t per_channel, float epsilon, T* folded_w,
                               T* folded_bias) {
  const std::int64_t n = channels * per_channel;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = i / per_channel;
    const float scale = bn.gamma[c] / sqrtf(bn.var[c] + epsilon);
    folded_w[i] = from_f32<T>(to_f32(w[i]) * scale);
    if (i % per_channel == 0) {
      const float b = bias != nullptr ? to_f32(bias[c]) : 0.0f;
      folded_bias[c] = from_f32<T>(bn.beta[c] + (b - bn.mean[c]) * scale);
    }
  }
}

struct BackwardChannels {
  const float* gamma;
  const float* mean;
  const float* inv_std;
  float* dgamma;
  float* dbeta;
};

// dgamma, dbeta, and coefficients [mean, gamma inv_std, dbeta / R, inv_std dgamma / R], so
// that dx = gamma inv_std (dy - dbeta / R - (x - mean) inv_std dgamma / R).
__global__ void bn_backward_finalize_kernel(const float* partial, std::int64_t chunks,
                                            std::int64_t rows, std::int64_t channels,
                                            BackwardChannels ch, float* coef) {
  const ChunkSums s = sum_chunks(partial, chunks, channels);
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  if (threadIdx.y != 0 || c >= channels) return;
  const float inv_std = ch.inv_std[c];
  const float dbeta = static_cast<float>(s.a);
  const float dgamma = static_cast<float>(s.b * static_cast<double>(inv_std));
  const float per_row = 1.0f / static_cast<float>(rows);
  ch.dgamma[c] = dgamma;
  ch.dbeta[c] = dbeta;
  coef[c] = ch.mean[c];
  coef[channels + c] = ch.gamma[c] * inv_std;
  coef[2 * channels + c] = dbeta * per_row;
  coef[3 * channels + c] = inv_std * dgamma * per_row;
}

}  // namespace
}  // namespace dlbench::backend::cuda
