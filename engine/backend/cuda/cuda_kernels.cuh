// Pieces every kernel file shares: f32 loads and stores of our float dtypes (math is always in
// f32; stores round to nearest even), dispatch from a DType to a C++ type, launch geometry,
// and a deterministic block reduction.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_types.h"

namespace dlbench::backend::cuda {

__device__ __forceinline__ float to_f32(float v) {
  return v;
}
__device__ __forceinline__ float to_f32(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with the C++ type of a float dtype; throws for other dtypes.
template <class F>
void dispatch_float(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(TypeTag<float>{});
    case DType::kF16:
      return f(TypeTag<__half>{});
    case DType::kBF16:
      return f(TypeTag<__nv_bfloat16>{});
    default:
      break;
  }
  throw Error(ErrorKind::kUsage, std::string(op) + ": dtype " + to_string(dtype) +
                                     " is not a float dtype (f32, f16, bf16)");
}

// N elements of T moved as one aligned load or store (16 bytes: 4 f32 or 8 f16/bf16).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <class T, int N>
__device__ __forceinline__ Pack<T, N> load(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}
template <class T, int N>
__device__ __forceinline__ void store(T* p, const Pack<T, N>& v) {
  *reinterpret_cast<Pack<T, N>*>(p) = v;
}

// Calls f(std::true_type{}) or f(std::false_type{}) as `flag` says: a run-time choice made a
// template argument, so a kernel instantiated for false carries no code for it.
template <class F>
void dispatch_bool(bool flag, F&& f) {
  if (flag)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// Calls f(TypeTag<T>, integral_constant<kVec>) for a [rows, channels] kernel: 16-byte packs
// when every row starts aligned (channels a multiple of the pack) and every pointer given is
// aligned (null ones count as aligned), else one element at a time.
template <class F>
void dispatch_packs(DType dtype, std::int64_t channels, std::initializer_list<const void*> data,
                    const char* op, F&& f) {
  dispatch_float(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kWide = 16 / sizeof(T);
    bool wide = channels % kWide == 0;
    for (const void* ptr : data) wide = wide && aligned16(ptr);
    if (wide)
      f(tag, std::integral_constant<int, kWide>{});
    else
      f(tag, std::integral_constant<int, 1>{});
  });
}

// Adds one to an i32 counter on the device (Adam's step, the negatives' draw), in one thread on
// the stream, so the kernels after it read the new value, also when a device graph replays.
void increment_on_device(std::int32_t* counter, cudaStream_t stream);

// A loss scale as a loss kernel takes it: the number, or where on the device it lies (read when
// the kernel runs, so a replayed device graph sees the scale of the moment).
struct ScaleArg {
  float value;
  const float* at;  // null: value
  __device__ __forceinline__ float get() const { return at != nullptr ? *at : value; }
};
inline ScaleArg scale_arg(const LossScale& scale) {
  return {scale.value, scale.on_device.defined() ? scale.on_device.data_as<float>() : nullptr};
}

constexpr int kBlock = 256;
// Grid-stride loops: enough blocks to fill the GPU many times over, never more than needed.
constexpr std::int64_t kMaxBlocks = 8192;

inline unsigned grid_for(std::int64_t work_items) {
  const std::int64_t blocks = (work_items + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, kMaxBlocks));
}

// Kernels that give each row a warp (layer norm, attention's softmax): kRowsPerBlock rows a
// block. Whole warps share a row, so a warp leaves its row's loop together and the full-mask
// shuffles after it (warp_reduce) see every lane.
constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kBlock / kWarp;
static_assert(kBlock % kWarp == 0);

inline unsigned warp_row_blocks(std::int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// Rows in chunks for the column sums over [rows, columns] (bias gradients, a convolution's
// statistics, layer norm's parameter gradients): about 256 rows each, at most 1024 chunks, so
// the partial sums stay a small workspace.
struct RowChunks {
  std::int64_t chunks, rows_per_chunk;
};
inline RowChunks row_chunks(std::int64_t rows) {
  constexpr std::int64_t kRowsPerChunk = 256, kMaxChunks = 1024;
  const std::int64_t chunks =
      std::clamp<std::int64_t>((rows + kRowsPerChunk - 1) / kRowsPerChunk, 1, kMaxChunks);
  return {chunks, (rows + chunks - 1) / chunks};
}

// The last pass of a column sum over chunks (bias gradients, batch-norm statistics): a block of
// (kLanes, kLanes) threads takes kLanes columns; lane y of column x adds chunks y, y + kLanes,
// ... in Acc, each chunk giving kSums values (load(k)), then a fixed tree over the lanes. Every
// thread returns its column's totals. The order depends only on the chunk count, so the sums
// repeat bit for bit. (One thread per column adding up to thousands of partials in a row waited
// on each load: tens of microseconds per call, as long as a small convolution.)
constexpr int kLanes = 32;

template <class Acc, int kSums>
struct LaneSums {
  Acc v[kSums];
};

template <class Acc, int kSums, class Load>
__device__ LaneSums<Acc, kSums> lane_column_sums(std::int64_t chunks, bool in_range, Load load) {
  __shared__ Acc lanes[kSums][kLanes][kLanes + 1];  // +1: no bank conflicts in the tree
  const int tx = threadIdx.x, ty = threadIdx.y;
  Acc total[kSums] = {};
  if (in_range) {
#pragma unroll 4
    for (std::int64_t k = ty; k < chunks; k += kLanes) {
      const LaneSums<float, kSums> chunk = load(k);
#pragma unroll
      for (int j = 0; j < kSums; ++j) total[j] += chunk.v[j];
    }
  }
#pragma unroll
  for (int j = 0; j < kSums; ++j) lanes[j][ty][tx] = total[j];
  __syncthreads();
  for (int half = kLanes / 2; half > 0; half /= 2) {
    if (ty < half)
#pragma unroll
      for (int j = 0; j < kSums; ++j) lanes[j][ty][tx] += lanes[j][ty + half][tx];
    __syncthreads();
  }
  LaneSums<Acc, kSums> out;
#pragma unroll
  for (int j = 0; j < kSums; ++j) out.v[j] = lanes[j][0][tx];
  return out;
}

// block_reduce's sum.
struct Add {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
// block_reduce's and warp_reduce's maximum of f32 values.
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Sum (or max) over the 32 lanes of a warp, as a fixed butterfly of shuffles: every lane gets
// the result, the same bits on every run. Every lane of the warp must call it.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// Sum (or max) over a block, in a fixed order for a fixed blockDim: warp shuffles, then the
// warps' results in shared memory. Every thread gets the result. blockDim.x must be a multiple
// of 32 and at most 1024.
template <class T, class Op>
__device__ T block_reduce(T value, Op op) {
  __shared__ T partial[32];
  value = warp_reduce(value, op);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  value = partial[0];
  for (int i = 1; i < warps; ++i) value = op(value, partial[i]);
  return value;
}

}  // namespace dlbench::backend::cuda
