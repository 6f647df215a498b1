// Activations, elementwise ops, the column sums behind bias gradients, casts and finite checks.
//
//   ReLU:        y = max(x, 0);   dx (+)= dy where y > 0, else 0 (from y, so x need not be kept)
//   add:         y = a + b;       accumulate: dst += src;       multiply: y (+)= a * b
//   GELU:        y = x (1 + tanh u) / 2, u = sqrt(2/pi) (x + 0.044715 x^3)   (the tanh form,
//                as cuBLASLt's GELU epilogues compute it);  dx (+)= dy GELU'(x)  (f32 math)
//   tanh:        y = tanh(x);     dx (+)= dy (1 - y^2)
//   column sums: out[c] (+)= sum_r in[r, c]   (bias gradients of conv and matmul)
//   ReLU backward with the bias gradient: dx (+)= g, dbias[c] (+)= sum_r g[r, c], g the ReLU's
//                gradient, in one pass over y and dy and a small second over partial sums
//   statistics:  s[0, c] = sum_r y[r, c], s[1, c] = sum_r y[r, c]^2 (a convolution's output, for
//                the batch norm after it, where no fused cuDNN plan wrote them)
//   epilogue:    y[r, c] = act(y[r, c] + b[c]) in place (a cuDNN convolution's bias and ReLU)
//   cast:        dst = round_to_nearest_even(src) in dst's dtype
// Elementwise ops see tensors as flat arrays and move 16 bytes per thread and step when every
// pointer is 16-byte aligned (8 halves or 4 floats), so these memory-bound passes run at the
// memory's speed; math is in f32 and rounds once on store.
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// out = op(a, b) (+ out when accumulating), kVec elements at a time, then a scalar tail.
template <class T, int kVec, class Op>
__global__ void map2_kernel(const T* a, const T* b, T* out, std::int64_t n, Op op,
                            bool accumulate) {
  const std::int64_t packs = n / kVec;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  using P = Pack<T, kVec>;
  for (std::int64_t i = first; i < packs; i += stride) {
    const P pa = reinterpret_cast<const P*>(a)[i];
    const P pb = reinterpret_cast<const P*>(b)[i];
    P po{};
    if (accumulate) po = reinterpret_cast<const P*>(out)[i];
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      float r = op(to_f32(pa.v[j]), to_f32(pb.v[j]));
      if (accumulate) r += to_f32(po.v[j]);
      po.v[j] = from_f32<T>(r);
    }
    reinterpret_cast<P*>(out)[i] = po;
  }
  for (std::int64_t i = packs * kVec + first; i < n; i += stride) {
    float r = op(to_f32(a[i]), to_f32(b[i]));
    if (accumulate) r += to_f32(out[i]);
    out[i] = from_f32<T>(r);
  }
}

struct ReluForward {
  __device__ float operator()(float x, float) const { return x > 0.0f ? x : 0.0f; }
};
struct ReluBackward {  // (y, dy)
  __device__ float operator()(float y, float dy) const { return y > 0.0f ? dy : 0.0f; }
};
struct Identity {
  __device__ float operator()(float x, float) const { return x; }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Product {
  __device__ float operator()(float a, float b) const { return a * b; }
};
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;
struct GeluForward {
  __device__ float operator()(float x, float) const {
    return 0.5f * x * (1.0f + tanhf(kGeluC * (x + kGeluA * x * x * x)));
  }
};
struct TanhForward {
  __device__ float operator()(float x, float) const { return tanhf(x); }
};
struct TanhBackward {  // (y, dy)
  __device__ float operator()(float y, float dy) const { return dy * (1.0f - y * y); }
};
struct GeluBackward {  // (x, dy)
  __device__ float operator()(float x, float dy) const {
    const float t = tanhf(kGeluC * (x + kGeluA * x * x * x));
    return dy *
           (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3 * kGeluA * x * x));
  }
};

template <class Op>
void map2(const Tensor& a, const Tensor& b, const Tensor& out, Op op, bool accumulate,
          cudaStream_t stream, const char* name) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  dispatch_float(out.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    const auto* pa = static_cast<const T*>(a.data());
    const auto* pb = static_cast<const T*>(b.data());
    auto* po = static_cast<T*>(out.data());
    if (aligned16(pa) && aligned16(pb) && aligned16(po))
      map2_kernel<T, kVec>
          <<<grid_for(n / kVec + 1), kBlock, 0, stream>>>(pa, pb, po, n, op, accumulate);
    else
      map2_kernel<T, 1><<<grid_for(n), kBlock, 0, stream>>>(pa, pb, po, n, op, accumulate);
    CUDA_CHECK_LAUNCH();
  });
}

// y[r, c] = act(y[r, c] (+ b[c])) over [rows, channels], kVec channels at a time (channels a
// multiple of kVec, so a pack never straddles two rows).
template <class T, int kVec>
__global__ void epilogue_kernel(T* y, const T* bias, const T* residual, std::int64_t packs,
                                std::int64_t channels, bool relu) {
  using P = Pack<T, kVec>;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += stride) {
    P v = reinterpret_cast<const P*>(y)[i];
    P add{};
    if (residual != nullptr) add = reinterpret_cast<const P*>(residual)[i];
    const std::int64_t c0 = i * kVec % channels;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      float r = to_f32(v.v[j]);
      if (bias != nullptr) r += to_f32(bias[c0 + j]);
      if (residual != nullptr) r += to_f32(add.v[j]);
      if (relu) r = fmaxf(r, 0.0f);
      v.v[j] = from_f32<T>(r);
    }
    reinterpret_cast<P*>(y)[i] = v;
  }
}

// Pass 1 of the column sums: block (x, y) sums columns [32 x, 32 x + 32) over its chunk of
// rows into partial[y, c]; threads stride down the rows 8 at a time and reduce in shared
// memory in a fixed order.
constexpr int kColumnTile = 32;
constexpr int kRowThreads = 8;

template <class T>
__global__ void column_partial_kernel(const T* in, std::int64_t rows, std::int64_t cols,
                                      std::int64_t rows_per_chunk, float* partial) {
  __shared__ float tile[kRowThreads][kColumnTile];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  float sum = 0.0f;
  if (c < cols)
    for (std::int64_t r = begin + threadIdx.y; r < end; r += kRowThreads)
      sum += to_f32(in[r * cols + c]);
  tile[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    for (int i = 1; i < kRowThreads; ++i) sum += tile[i][threadIdx.x];
    partial[static_cast<std::int64_t>(blockIdx.y) * cols + c] = sum;
  }
}

// Pass 2: the chunks' partial sums per column (lane_column_sums), added to or written into out.
template <class T>
__global__ void column_final_kernel(const float* partial, std::int64_t chunks, std::int64_t cols,
                                    T* out, bool accumulate) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  const LaneSums<float, 1> sum = lane_column_sums<float, 1>(chunks, c < cols, [&](std::int64_t k) {
    return LaneSums<float, 1>{{partial[k * cols + c]}};
  });
  if (threadIdx.y == 0 && c < cols)
    out[c] = from_f32<T>((accumulate ? to_f32(out[c]) : 0.0f) + sum.v[0]);
}

// column_final_kernel's launch over `cols` columns.
dim3 final_grid(std::int64_t cols) {
  return dim3(static_cast<unsigned>((cols + kLanes - 1) / kLanes));
}
const dim3 kFinalBlock(kLanes, kLanes);

// The per-channel sums of a chunk of rows, kSums of them per channel (a bias gradient; a sum
// and a sum of squares): block (x, y) takes blockDim.x packs of kVec channels from pack
// blockIdx.x * blockDim.x over chunk y of the rows, each thread summing its pack on rows
// threadIdx.y, + blockDim.y, ... Then the block adds its rows' sums in a fixed order into
// partial[y][s][c] (cols = packs * kVec channels); column_final_kernel over kSums * cols
// columns finishes. Shared memory: kSums * kVec floats per thread.
template <int kSums, int kVec>
__device__ void write_block_sums(float (&sum)[kSums][kVec], std::int64_t pack, std::int64_t packs,
                                 float* partial) {
  extern __shared__ float shared_sums[];  // [blockDim.y][blockDim.x][kSums][kVec]
  constexpr int kPerThread = kSums * kVec;
  float* mine = shared_sums + (threadIdx.y * blockDim.x + threadIdx.x) * kPerThread;
#pragma unroll
  for (int s = 0; s < kSums; ++s)
#pragma unroll
    for (int j = 0; j < kVec; ++j) mine[s * kVec + j] = sum[s][j];
  __syncthreads();
  if (threadIdx.y != 0 || pack >= packs) return;
  for (unsigned t = 1; t < blockDim.y; ++t) {
    const float* theirs = shared_sums + (t * blockDim.x + threadIdx.x) * kPerThread;
#pragma unroll
    for (int s = 0; s < kSums; ++s)
#pragma unroll
      for (int j = 0; j < kVec; ++j) sum[s][j] += theirs[s * kVec + j];
  }
  const std::int64_t cols = packs * kVec;
#pragma unroll
  for (int s = 0; s < kSums; ++s) {
    float* row = partial + (static_cast<std::int64_t>(blockIdx.y) * kSums + s) * cols + pack * kVec;
#pragma unroll
    for (int j = 0; j < kVec; ++j) row[j] = sum[s][j];
  }
}

// Pass 1 of ReLU's backward with the bias gradient: each thread also writes the gradient of
// its pack.
template <class T, int kVec>
__global__ void relu_backward_partial_kernel(const T* y, const T* dy, T* dx, std::int64_t rows,
                                             std::int64_t packs, std::int64_t rows_per_chunk,
                                             bool relu, bool accumulate, float* partial) {
  using P = Pack<T, kVec>;
  const std::int64_t pack = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  float sum[1][kVec] = {};
  if (pack < packs) {
    for (std::int64_t r = begin + threadIdx.y; r < end; r += blockDim.y) {
      const std::int64_t i = r * packs + pack;
      const P py = reinterpret_cast<const P*>(y)[i];
      const P pdy = reinterpret_cast<const P*>(dy)[i];
      P out{};
      if (accumulate) out = reinterpret_cast<const P*>(dx)[i];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float g = !relu || to_f32(py.v[j]) > 0.0f ? to_f32(pdy.v[j]) : 0.0f;
        sum[0][j] += g;
        out.v[j] = from_f32<T>(accumulate ? to_f32(out.v[j]) + g : g);
      }
      reinterpret_cast<P*>(dx)[i] = out;
    }
  }
  write_block_sums<1, kVec>(sum, pack, packs, partial);
}

// Pass 1 of a convolution output's batch-norm statistics: sums of y and of y^2.
template <class T, int kVec>
__global__ void statistics_partial_kernel(const T* y, std::int64_t rows, std::int64_t packs,
                                          std::int64_t rows_per_chunk, float* partial) {
  using P = Pack<T, kVec>;
  const std::int64_t pack = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  float sum[2][kVec] = {};
  if (pack < packs) {
    for (std::int64_t r = begin + threadIdx.y; r < end; r += blockDim.y) {
      const P py = reinterpret_cast<const P*>(y)[r * packs + pack];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float v = to_f32(py.v[j]);
        sum[0][j] += v;
        sum[1][j] += v * v;
      }
    }
  }
  write_block_sums<2, kVec>(sum, pack, packs, partial);
}

// The channel-sum kernels' launch: up to 32 packs across a block and the rest of its kBlock
// threads down the rows; shared memory for write_block_sums.
struct SumLaunch {
  dim3 grid, block;
  std::size_t shared;
};
SumLaunch sum_launch(std::int64_t packs, std::int64_t chunks, int floats_per_thread) {
  const unsigned across = static_cast<unsigned>(std::min<std::int64_t>(packs, 32));
  const dim3 block(across, kBlock / across);
  return {dim3(static_cast<unsigned>((packs + across - 1) / across), static_cast<unsigned>(chunks)),
          block, sizeof(float) * floats_per_thread * block.x * block.y};
}

template <class S, class D>
__global__ void cast_kernel(const S* src, D* dst, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    dst[i] = from_f32<D>(to_f32(src[i]));
}

template <class T>
__global__ void all_finite_kernel(const T* x, std::int64_t n, int* not_finite) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  bool bad = false;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    bad |= !isfinite(to_f32(x[i]));
  if (__syncthreads_or(bad) && threadIdx.x == 0) *not_finite = 1;
}

}  // namespace

void CudaBackend::activation_forward_impl(Activation a, const Tensor& x, const Tensor& y) {
  activate();
  require_here(x, "activation_forward", "x"), require_here(y, "activation_forward", "y");
  if (a == Activation::kNone) return copy_impl(x, y);
  map2(x, x, y, ReluForward{}, false, stream_, "activation_forward");
}

void CudaBackend::activation_backward_impl(Activation a, const Tensor& y, const Tensor& dy,
                                           const Tensor& dx, GradMode mode, const Tensor& dbias,
                                           GradMode dbias_mode) {
  activate();
  const char* op = "activation_backward";
  require_here(y, op, "y"), require_here(dy, op, "dy"), require_here(dx, op, "dx");
  const bool accumulate = mode == GradMode::kAccumulate;
  if (dbias.defined()) {
    require_here(dbias, op, "dbias");
    return activation_bias_backward(a, y, dy, dx, accumulate, dbias, dbias_mode);
  }
  if (a == Activation::kNone) {
    if (!accumulate) return copy_impl(dy, dx);
    return map2(dy, dy, dx, Identity{}, true, stream_, op);
  }
  map2(y, dy, dx, ReluBackward{}, accumulate, stream_, op);
}

void CudaBackend::add_impl(const Tensor& a, const Tensor& b, const Tensor& y) {
  activate();
  require_here(a, "add", "a"), require_here(b, "add", "b"), require_here(y, "add", "y");
  map2(a, b, y, Sum{}, false, stream_, "add");
}

void CudaBackend::multiply_impl(const Tensor& a, const Tensor& b, const Tensor& y, GradMode mode) {
  activate();
  require_here(a, "multiply", "a"), require_here(b, "multiply", "b");
  require_here(y, "multiply", "y");
  map2(a, b, y, Product{}, mode == GradMode::kAccumulate, stream_, "multiply");
}

void CudaBackend::gelu_forward_impl(const Tensor& x, const Tensor& y) {
  activate();
  require_here(x, "gelu_forward", "x"), require_here(y, "gelu_forward", "y");
  map2(x, x, y, GeluForward{}, false, stream_, "gelu_forward");
}

void CudaBackend::gelu_backward_impl(const Tensor& x, const Tensor& dy, const Tensor& dx,
                                     GradMode mode) {
  activate();
  const char* op = "gelu_backward";
  require_here(x, op, "x"), require_here(dy, op, "dy"), require_here(dx, op, "dx");
  map2(x, dy, dx, GeluBackward{}, mode == GradMode::kAccumulate, stream_, op);
}

void CudaBackend::tanh_forward_impl(const Tensor& x, const Tensor& y) {
  activate();
  require_here(x, "tanh_forward", "x"), require_here(y, "tanh_forward", "y");
  map2(x, x, y, TanhForward{}, false, stream_, "tanh_forward");
}

void CudaBackend::tanh_backward_impl(const Tensor& y, const Tensor& dy, const Tensor& dx,
                                     GradMode mode) {
  activate();
  const char* op = "tanh_backward";
  require_here(y, op, "y"), require_here(dy, op, "dy"), require_here(dx, op, "dx");
  map2(y, dy, dx, TanhBackward{}, mode == GradMode::kAccumulate, stream_, op);
}

void CudaBackend::accumulate_impl(const Tensor& src, const Tensor& dst) {
  activate();
  require_here(src, "accumulate", "src"), require_here(dst, "accumulate", "dst");
  map2(src, src, dst, Identity{}, true, stream_, "accumulate");
}

void CudaBackend::bias_activation(void* y, const void* bias, const void* residual,
                                  std::int64_t rows, std::int64_t channels, Activation activation,
                                  DType dtype) {
  const std::int64_t n = rows * channels;
  if (n == 0 || (bias == nullptr && residual == nullptr && activation == Activation::kNone)) return;
  const bool relu = activation == Activation::kRelu;
  dispatch_float(dtype, "conv_forward epilogue", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    auto* py = static_cast<T*>(y);
    const auto* pb = static_cast<const T*>(bias);
    const auto* pr = static_cast<const T*>(residual);
    if (channels % kVec == 0 && aligned16(py) && aligned16(pr))
      epilogue_kernel<T, kVec>
          <<<grid_for(n / kVec), kBlock, 0, stream_>>>(py, pb, pr, n / kVec, channels, relu);
    else
      epilogue_kernel<T, 1><<<grid_for(n), kBlock, 0, stream_>>>(py, pb, pr, n, channels, relu);
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::column_sums(const Tensor& in, std::int64_t rows, std::int64_t cols,
                              const Tensor& out, GradMode mode, const char* op) {
  require_same_dtype(in, out, op, "bias gradient");
  const auto [chunks, rows_per_chunk] = row_chunks(rows);
  auto* partial = static_cast<float*>(workspace(sizeof(float) * chunks * cols));
  dispatch_float(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const dim3 grid(static_cast<unsigned>((cols + kColumnTile - 1) / kColumnTile),
                    static_cast<unsigned>(chunks));
    column_partial_kernel<T><<<grid, dim3(kColumnTile, kRowThreads), 0, stream_>>>(
        static_cast<const T*>(in.data()), rows, cols, rows_per_chunk, partial);
    CUDA_CHECK_LAUNCH();
    column_final_kernel<T><<<final_grid(cols), kFinalBlock, 0, stream_>>>(
        partial, chunks, cols, static_cast<T*>(out.data()), mode == GradMode::kAccumulate);
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::activation_bias_backward(Activation a, const Tensor& y, const Tensor& dy,
                                           const Tensor& dx, bool accumulate, const Tensor& dbias,
                                           GradMode dbias_mode) {
  const char* op = "activation_backward";
  const std::int64_t cols = dbias.numel();
  const std::int64_t rows = y.numel() / cols;
  const auto [chunks, rows_per_chunk] = row_chunks(rows);
  auto* partial = static_cast<float*>(workspace(sizeof(float) * chunks * cols));
  const bool relu = a == Activation::kRelu;
  dispatch_packs(y.dtype(), cols, {y.data(), dy.data(), dx.data()}, op, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    const std::int64_t packs = cols / kVec;
    const SumLaunch l = sum_launch(packs, chunks, kVec);
    relu_backward_partial_kernel<T, kVec><<<l.grid, l.block, l.shared, stream_>>>(
        static_cast<const T*>(y.data()), static_cast<const T*>(dy.data()),
        static_cast<T*>(dx.data()), rows, packs, rows_per_chunk, relu, accumulate, partial);
    CUDA_CHECK_LAUNCH();
    column_final_kernel<T><<<final_grid(cols), kFinalBlock, 0, stream_>>>(
        partial, chunks, cols, static_cast<T*>(dbias.data()), dbias_mode == GradMode::kAccumulate);
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::channel_statistics(const void* y, DType dtype, std::int64_t rows,
                                     std::int64_t channels, float* statistics) {
  const char* op = "conv_forward statistics";
  const auto [chunks, rows_per_chunk] = row_chunks(rows);
  auto* partial = static_cast<float*>(workspace(sizeof(float) * chunks * 2 * channels));
  dispatch_packs(dtype, channels, {y}, op, [&](auto tag, auto vec) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = decltype(vec)::value;
    const std::int64_t packs = channels / kVec;
    const SumLaunch l = sum_launch(packs, chunks, 2 * kVec);
    statistics_partial_kernel<T, kVec><<<l.grid, l.block, l.shared, stream_>>>(
        static_cast<const T*>(y), rows, packs, rows_per_chunk, partial);
    CUDA_CHECK_LAUNCH();
  });
  // Partial rows are [chunk][sum, squares][channel]: 2 * channels columns to finish.
  column_final_kernel<float><<<final_grid(2 * channels), kFinalBlock, 0, stream_>>>(
      partial, chunks, 2 * channels, statistics, false);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::cast_impl(const Tensor& src, const Tensor& dst) {
  activate();
  require_here(src, "cast", "src"), require_here(dst, "cast", "dst");
  if (src.dtype() == dst.dtype()) return copy_impl(src, dst);
  const std::int64_t n = src.numel();
  if (n == 0) return;
  dispatch_float(src.dtype(), "cast", [&](auto src_tag) {
    dispatch_float(dst.dtype(), "cast", [&](auto dst_tag) {
      using S = typename decltype(src_tag)::type;
      using D = typename decltype(dst_tag)::type;
      cast_kernel<<<grid_for(n), kBlock, 0, stream_>>>(static_cast<const S*>(src.data()),
                                                       static_cast<D*>(dst.data()), n);
      CUDA_CHECK_LAUNCH();
    });
  });
}

bool CudaBackend::all_finite_impl(const Tensor& t) {
  activate();
  require_here(t, "all_finite", "t");
  const std::int64_t n = t.numel();
  if (n == 0) return true;
  auto* flag = static_cast<int*>(workspace(sizeof(int)));
  CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream_));
  dispatch_float(t.dtype(), "all_finite", [&](auto tag) {
    using T = typename decltype(tag)::type;
    all_finite_kernel<<<grid_for(n), kBlock, 0, stream_>>>(static_cast<const T*>(t.data()), n,
                                                           flag);
    CUDA_CHECK_LAUNCH();
  });
  int not_finite = 0;
  CUDA_CHECK(cudaMemcpyAsync(&not_finite, flag, sizeof(int), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return not_finite == 0;
}

}  // namespace dlbench::backend::cuda
