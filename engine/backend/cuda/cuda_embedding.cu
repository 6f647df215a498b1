// Embedding lookups and their gradient.
//
//   forward:  y[i, :] = table[ids[i], :]                  (a NaN row for an id outside [0, V))
//   backward: dtable[ids[i], :] += dy[i, :] in id order;   touched[ids[i]] = 1
// The backward is deterministic without float atomics: the (id, position) pairs are sorted by
// id with CUB's radix sort, which is stable, so each id's positions stay in ascending order;
// then each run of equal ids is added to its table row in f32 and rounded once. A run shorter
// than kPart is added in order by one block, the CPU backend's order, so those rows match it bit
// for bit. A longer run (a batch of padded sentences gives the padding id about half of its
// entries; at 65,536 Zipf pairs the commonest word takes about 5,500) is cut at the kPart-aligned
// chunks of the sorted entries: each part is summed by its own block into scratch, and a second
// pass adds the parts in order. Another order than the CPU's, but the same on every run; and a
// run of 4,500 entries takes 70 blocks, not one block walking them all (1.5 ms per lookup).
// The sort's buffers and the parts come from the caller's workspace
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

constexpr std::int64_t kPart = 64;  // runs this long or longer are summed by parts of this many
constexpr int kUnroll = 4;          // loads a thread keeps in flight

// The scratch slots of partial sums: two per kPart-aligned chunk of sorted entries, since a
// chunk holds at most two parts of long runs (one going on from the chunk before, at its first
// entry, and one starting inside it: that run reaches past the chunk's end).
std::int64_t partial_slots(std::int64_t n) {
  return 2 * ((n + kPart - 1) / kPart);
}

__device__ std::int64_t partial_slot(std::int64_t k) {
  return 2 * (k / kPart) + (k % kPart == 0 ? 0 : 1);
}

// Whether the run of equal ids that starts at sorted entry k has kPart entries or more.
__device__ bool long_run(const std::uint32_t* keys, std::int64_t n, std::int64_t k) {
  return k + kPart <= n && keys[k + kPart - 1] == keys[k];
}

// Pass 1. Block k works when sorted entry k starts a run, or starts a kPart-aligned chunk inside
// a run. A short run (fewer than kPart entries) is added to its table row right here, in order,
// the CPU backend's order: those rows match it bit for bit. A long run (the padding id of a
// batch of sentences takes about half of it; a frequent word thousands of entries) is summed by
// parts, each block its part up to the chunk's end, into a scratch slot; pass 2 adds the parts.
// So no block walks more than kPart entries, and a long run is spread over many SMs.
// Launched with kBlock threads.
template <class T>
__global__ void embedding_backward_parts_kernel(const std::uint32_t* keys,
                                                const std::int32_t* positions, std::int64_t n,
                                                std::int64_t vocab, std::int64_t dim, const T* dy,
                                                T* dtable, std::int32_t* touched, float* partials) {
  __shared__ std::int32_t rows[kPart];
  for (std::int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const std::uint32_t id = keys[k];
    const bool starts_run = k == 0 || keys[k - 1] != id;
    if (id >= vocab || !(starts_run || k % kPart == 0)) continue;
    const bool part = !starts_run || long_run(keys, n, k);
    const std::int64_t chunk_end = (k / kPart + 1) * kPart;
    const std::int64_t limit = part && chunk_end < n ? chunk_end : n;
    const std::int64_t j = k + threadIdx.x;
    const bool mine = threadIdx.x < kPart && j < limit && keys[j] == id;
    if (mine) rows[threadIdx.x] = positions[j];
    // The part's entries are a prefix of [k, limit): count them while the rows land.
    const int count = __syncthreads_count(mine);
    if (threadIdx.x == 0 && starts_run) touched[id] = 1;
    T* out = dtable + static_cast<std::int64_t>(id) * dim;
    for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
      float sum = part ? 0.0f : to_f32(out[d]);
      int e = 0;
      for (; e + kUnroll <= count; e += kUnroll) {
        float v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          v[u] = to_f32(dy[static_cast<std::int64_t>(rows[e + u]) * dim + d]);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) sum += v[u];
      }
      for (; e < count; ++e) sum += to_f32(dy[static_cast<std::int64_t>(rows[e]) * dim + d]);
      if (part)
        partials[partial_slot(k) * dim + d] = sum;
      else
        out[d] = from_f32<T>(sum);
    }
    __syncthreads();  // rows[] is reused by the block's next entry
  }
}

// Pass 2: block k works when sorted entry k starts a long run, and adds the run's parts to its
// table row in part order (the first part's slot, then the slot at the start of each further
// chunk the run reaches), rounding once.
template <class T>
__global__ void embedding_backward_sum_parts_kernel(const std::uint32_t* keys, std::int64_t n,
                                                    std::int64_t vocab, std::int64_t dim,
                                                    const float* partials, T* dtable) {
  for (std::int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const std::uint32_t id = keys[k];
    if (id >= vocab || (k > 0 && keys[k - 1] == id) || !long_run(keys, n, k)) continue;
    T* out = dtable + static_cast<std::int64_t>(id) * dim;
    for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
      float sum = to_f32(out[d]) + partials[partial_slot(k) * dim + d];
      for (std::int64_t c = k / kPart + 1; c * kPart < n && keys[c * kPart] == id; ++c)
        sum += partials[2 * c * dim + d];
      out[d] = from_f32<T>(sum);
    }
  }
}

}  // namespace

std::size_t CudaBackend::embedding_backward_workspace_bytes(std::int64_t ids, std::int64_t vocab,
                                                            std::int64_t dim) const {
  if (ids == 0) return 0;
  activate();
  return 4 * aligned(sizeof(std::int32_t) * static_cast<std::size_t>(ids)) +
         aligned(sizeof(float) * static_cast<std::size_t>(partial_slots(ids) * dim)) +
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
  auto* partials = reinterpret_cast<float*>(base + 4 * slot);
  void* scratch =
      base + 4 * slot + aligned(sizeof(float) * static_cast<std::size_t>(partial_slots(n) * dim));
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
    auto* table = static_cast<T*>(dtable.data());
    embedding_backward_parts_kernel<T><<<row_blocks(n), kBlock, 0, stream_>>>(
        keys, positions, n, vocab, dim, static_cast<const T*>(dy.data()), table,
        touched.data_as<std::int32_t>(), partials);
    CUDA_CHECK_LAUNCH();
    embedding_backward_sum_parts_kernel<T>
        <<<row_blocks(n), row_threads(dim), 0, stream_>>>(keys, n, vocab, dim, partials, table);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda
