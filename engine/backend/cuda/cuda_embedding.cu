// Embedding lookups and their gradient.
//
//   forward:  y[i, :] = table[ids[i], :]                  (a NaN row for an id outside [0, V))
//   backward: dtable[ids[i], :] += dy[i, :] in id order;   touched[ids[i]] = 1
// The backward is deterministic without float atomics: the (id, position) pairs are sorted by
// id with CUB's radix sort, which is stable, so each id's positions stay in ascending order;
// then one block per run of equal ids adds that run's dy rows to the table row in f32 and
// rounds once. A run shorter than kSplitRun is added in order, the CPU backend's order, so those
// rows match it bit for bit. A longer run (a frequent word: at 65,536 Zipf pairs the commonest
// takes about 5,500 of them, and summing those one after another took most of a Word2Vec step)
// is cut into kSplitWarps equal parts, each warp sums its part in order with kUnroll loads in
// flight, and the parts are added in part order: another order than the CPU's, but the same on
// every run. The sort's buffers and scratch come from the caller's workspace
// (embedding_backward_workspace_bytes), so the op allocates nothing, never waits for the host
// and can be recorded in a device graph. Ids outside [0, V) are sorted as V and skipped: their
// rows add to nothing (the CPU backend throws instead; a device kernel cannot).
#include <cub/device/device_radix_sort.cuh>

#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

constexpr std::size_t kAlign = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// Bits of the sort keys, which run from 0 to V (V stands for every out-of-range id).
int key_bits(std::int64_t vocab) {
  int bits = 1;
  while (bits < 32 && (std::int64_t{1} << bits) <= vocab) ++bits;
  return bits;
}

std::size_t sort_scratch_bytes(std::int64_t n, std::int64_t vocab) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
      static_cast<std::uint32_t*>(nullptr), static_cast<const std::int32_t*>(nullptr),
      static_cast<std::int32_t*>(nullptr), static_cast<int>(n), 0, key_bits(vocab)));
  return bytes;
}

// Threads of a block that walks the columns of a row: a multiple of 32, at most 256.
unsigned row_threads(std::int64_t dim) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((dim + 31) / 32 * 32, 32, 256));
}

unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(rows, 1, 65535));
}

template <class T>
__global__ void embedding_forward_kernel(const T* table, const std::int32_t* ids, std::int64_t n,
                                         std::int64_t vocab, std::int64_t dim, T* y) {
  for (std::int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const std::int32_t id = ids[i];
    const bool valid = id >= 0 && id < vocab;
    const T* row = table + static_cast<std::int64_t>(valid ? id : 0) * dim;
    for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x)
      y[i * dim + d] = valid ? row[d] : from_f32<T>(NAN);
  }
}

// keys[i] = ids[i] (V when out of range), positions[i] = i.
__global__ void sort_input_kernel(const std::int32_t* ids, std::int64_t n, std::int64_t vocab,
                                  std::uint32_t* keys, std::int32_t* positions) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::int32_t id = ids[i];
    keys[i] = static_cast<std::uint32_t>(id >= 0 && id < vocab ? id : vocab);
    positions[i] = static_cast<std::int32_t>(i);
  }
}

constexpr std::int64_t kSplitRun = 64;    // runs this long or longer are summed by parts
constexpr int kSplitWarps = kBlock / 32;  // the parts of a long run, a warp each
constexpr int kUnroll = 4;                // loads a warp keeps in flight

// The sum over sorted entries [first, last) of dy[positions[j], d], in order.
template <class T>
__device__ float run_part_sum(const std::int32_t* positions, std::int64_t first, std::int64_t last,
                              std::int64_t dim, std::int64_t d, const T* dy) {
  float sum = 0;
  std::int64_t j = first;
  for (; j + kUnroll <= last; j += kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = to_f32(dy[static_cast<std::int64_t>(positions[j + u]) * dim + d]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += v[u];
  }
  for (; j < last; ++j) sum += to_f32(dy[static_cast<std::int64_t>(positions[j]) * dim + d]);
  return sum;
}

// Block k owns sorted entry k when it starts a run of equal ids, and adds the run's dy rows.
// Launched with kBlock threads.
template <class T>
__global__ void embedding_backward_kernel(const std::uint32_t* keys, const std::int32_t* positions,
                                          std::int64_t n, std::int64_t vocab, std::int64_t dim,
                                          const T* dy, T* dtable, std::int32_t* touched) {
  __shared__ std::int64_t run_end;
  __shared__ float parts[kSplitWarps][32];
  for (std::int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const std::uint32_t row = keys[k];
    if (row >= vocab || (k > 0 && keys[k - 1] == row)) continue;
    T* out = dtable + static_cast<std::int64_t>(row) * dim;
    if (threadIdx.x == 0) touched[row] = 1;
    if (k + kSplitRun > n || keys[k + kSplitRun - 1] != row) {  // short: in order, as the CPU
      for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
        float sum = to_f32(out[d]);
        for (std::int64_t j = k; j < n && keys[j] == row; ++j)
          sum += to_f32(dy[static_cast<std::int64_t>(positions[j]) * dim + d]);
        out[d] = from_f32<T>(sum);
      }
      continue;
    }
    if (threadIdx.x == 0) {  // the run's end: the first key past `row`, by bisection
      std::int64_t low = k + kSplitRun, high = n;
      while (low < high) {
        const std::int64_t mid = low + (high - low) / 2;
        if (keys[mid] == row)
          low = mid + 1;
        else
          high = mid;
      }
      run_end = low;
    }
    __syncthreads();
    const std::int64_t length = run_end - k;
    const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
    const std::int64_t first = k + length * warp / kSplitWarps;
    const std::int64_t last = k + length * (warp + 1) / kSplitWarps;
    for (std::int64_t d0 = 0; d0 < dim; d0 += 32) {
      const std::int64_t d = d0 + lane;
      if (d < dim) parts[warp][lane] = run_part_sum(positions, first, last, dim, d, dy);
      __syncthreads();
      if (warp == 0 && d < dim) {
        float sum = to_f32(out[d]);
        for (int w = 0; w < kSplitWarps; ++w) sum += parts[w][lane];
        out[d] = from_f32<T>(sum);
      }
      __syncthreads();
    }
  }
}

}  // namespace

std::size_t CudaBackend::embedding_backward_workspace_bytes(std::int64_t ids,
                                                            std::int64_t vocab) const {
  if (ids == 0) return 0;
  activate();
  return 4 * aligned(sizeof(std::int32_t) * static_cast<std::size_t>(ids)) +
         aligned(sort_scratch_bytes(ids, vocab));
}

void CudaBackend::embedding_forward_impl(const Tensor& table, const Tensor& ids, const Tensor& y) {
  const char* op = "embedding_forward";
  activate();
  for (const Tensor* t : {&table, &ids, &y}) require_here(*t, op, "operand");
  const std::int64_t n = ids.dim(0), vocab = table.dim(0), dim = table.dim(1);
  if (n == 0 || dim == 0) return;
  dispatch_float(table.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    embedding_forward_kernel<T><<<row_blocks(n), row_threads(dim), 0, stream_>>>(
        static_cast<const T*>(table.data()), ids.data_as<std::int32_t>(), n, vocab, dim,
        static_cast<T*>(y.data()));
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::embedding_backward_impl(const Tensor& dy, const Tensor& ids,
                                          const Tensor& workspace, const Tensor& dtable,
                                          const Tensor& touched, GradMode mode) {
  const char* op = "embedding_backward";
  activate();
  for (const Tensor* t : {&dy, &ids, &dtable, &touched}) require_here(*t, op, "operand");
  const std::int64_t n = ids.dim(0), vocab = dtable.dim(0), dim = dtable.dim(1);
  DLBENCH_CHECK(n < (std::int64_t{1} << 31) && vocab < (std::int64_t{1} << 31),
                "embedding_backward: more than 2^31 ids or rows");
  require_float(dtable, op, "dtable");
  if (mode == GradMode::kOverwrite) {
    if (dtable.bytes() > 0) CUDA_CHECK(cudaMemsetAsync(dtable.data(), 0, dtable.bytes(), stream_));
    if (touched.bytes() > 0)
      CUDA_CHECK(cudaMemsetAsync(touched.data(), 0, touched.bytes(), stream_));
  }
  if (n == 0) return;
  require_here(workspace, op, "workspace");
  auto* base = static_cast<char*>(workspace.data());
  const std::size_t slot = aligned(sizeof(std::int32_t) * static_cast<std::size_t>(n));
  auto* keys_in = reinterpret_cast<std::uint32_t*>(base);
  auto* keys = reinterpret_cast<std::uint32_t*>(base + slot);
  auto* positions_in = reinterpret_cast<std::int32_t*>(base + 2 * slot);
  auto* positions = reinterpret_cast<std::int32_t*>(base + 3 * slot);
  void* scratch = base + 4 * slot;
  std::size_t scratch_bytes = sort_scratch_bytes(n, vocab);
  sort_input_kernel<<<grid_for(n), kBlock, 0, stream_>>>(ids.data_as<std::int32_t>(), n, vocab,
                                                         keys_in, positions_in);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch, scratch_bytes, keys_in, keys, positions_in,
                                             positions, static_cast<int>(n), 0, key_bits(vocab),
                                             stream_));
  if (dim == 0) return;
  dispatch_float(dtable.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    embedding_backward_kernel<T><<<row_blocks(n), kBlock, 0, stream_>>>(
        keys, positions, n, vocab, dim, static_cast<const T*>(dy.data()),
        static_cast<T*>(dtable.data()), touched.data_as<std::int32_t>());
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
