// GNMT's normalized Bahdanau attention on the device (Backend::additive_attention_forward and
// _backward): the CPU backend's formulas (cpu_additive_attention.cc) in f32, without the
// [batch, queries, keys, width] tensor of tanh terms that a composition of ops materializes
// (PyTorch's reference: 655 MB in f16 at GNMT's batch of 128). Each kernel recomputes
// tanh(q_t + k_s) where it needs it.
//   forward   a block per (query, sample): the scores (a warp per key, its lanes across the
//             width), the masked softmax, then the context (threads across the value width);
//   backward  1. a block per (query, sample): dp, the scores' gradients ds (kept in the
//                workspace), dq, and the query's share of du;
//             2. a block per (key, sample): dk and dvalues, summed over the queries;
//             3. du, the column sums of the shares; 4. one block: dv and dg from du.
// Every sum runs in an order fixed by the shapes, so results repeat bit for bit.
#include <cmath>

#include "engine/backend/attention_mask.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {

std::string additive_attention_refusal(const AdditiveAttentionParams& p) {
  // A block keeps u and one query (or the score vector) in shared memory, plus a key's or a
  // query's column of scores: within the 48 KiB every launch gets without opting in, less
  // block_reduce's own 32 floats.
  constexpr std::int64_t kMaxFloats = 48 * 1024 / 4 - 32;
  if (2 * p.width + 2 * std::max(p.keys, p.queries) > kMaxFloats)
    return "additive attention keeps 2 * width + 2 * max(queries, keys) floats in shared memory: "
           "at most " +
           std::to_string(kMaxFloats) + " on CUDA";
  constexpr std::int64_t kMaxGridY = 65535;  // the batch is the grid's second dimension
  if (p.batch > kMaxGridY)
    return "additive attention takes at most " + std::to_string(kMaxGridY) +
           " samples per call on CUDA";
  return {};
}

namespace {

// u = g v / |v| into shared memory (width floats); returns |v|. Every thread of the block calls it,
// and the block is synchronized after it.
template <class T>
__device__ float load_score_vector(const T* v, const float* g, std::int64_t width, float* u) {
  float squares = 0;
  for (std::int64_t h = threadIdx.x; h < width; h += blockDim.x) {
    const float x = to_f32(v[h]);
    u[h] = x;
    squares += x * x;
  }
  const float norm = sqrtf(block_reduce(squares, Add{}));
  const float scale = g[0] / norm;
  for (std::int64_t h = threadIdx.x; h < width; h += blockDim.x) u[h] *= scale;
  __syncthreads();
  return norm;
}

template <class T>
__device__ __forceinline__ void put(T* dst, float value, GradMode mode) {
  *dst = from_f32<T>(mode == GradMode::kAccumulate ? to_f32(*dst) + value : value);
}

// Grid (queries, batch): the block of query t of sample b.
template <class T>
__global__ void __launch_bounds__(kBlock)
    forward_kernel(AdditiveAttentionParams p, const T* q, const T* k, const T* values, const T* v,
                   const float* g, const std::int32_t* lengths, T* o, float* probs) {
  extern __shared__ float shared[];
  const std::int64_t A = p.width, S = p.keys, B = p.batch, V = p.value_width;
  float* u = shared;
  float* query = u + A;
  float* score = query + A;  // [S]: the scores, then the probabilities
  const std::int64_t t = blockIdx.x, b = blockIdx.y, row = t * B + b;
  load_score_vector(v, g, A, u);
  for (std::int64_t h = threadIdx.x; h < A; h += blockDim.x) query[h] = to_f32(q[row * A + h]);
  const std::int64_t length = clamp_length(lengths, b, S);
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  for (std::int64_t s = threadIdx.x / kWarp; s < length; s += warps) {
    const T* key = k + (s * B + b) * A;
    float acc = 0;
    for (std::int64_t h = lane; h < A; h += kWarp) acc += u[h] * tanhf(query[h] + to_f32(key[h]));
    acc = warp_reduce(acc, Add{});
    if (lane == 0) score[s] = acc;
  }
  __syncthreads();
  float top = -INFINITY;
  for (std::int64_t s = threadIdx.x; s < length; s += blockDim.x) top = fmaxf(top, score[s]);
  top = block_reduce(top, Max{});
  float sum = 0;
  for (std::int64_t s = threadIdx.x; s < length; s += blockDim.x) {
    score[s] = expf(score[s] - top);
    sum += score[s];
  }
  sum = block_reduce(sum, Add{});
  const float inverse = length > 0 ? 1.0f / sum : 0.0f;
  float* out_probs = probs + (b * p.queries + t) * S;
  for (std::int64_t s = threadIdx.x; s < S; s += blockDim.x) {
    const float pr = s < length ? score[s] * inverse : 0.0f;
    out_probs[s] = pr;
    if (s < length) score[s] = pr;
  }
  __syncthreads();
  for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x) {
    float acc = 0;
    for (std::int64_t s = 0; s < length; ++s) acc += score[s] * to_f32(values[(s * B + b) * V + j]);
    o[row * V + j] = from_f32<T>(acc);
  }
}

// Grid (queries, batch): ds [batch, queries, keys] (0 past the length), dq where wanted, and the
// query's share of du [batch * queries, width] where wanted.
template <class T>
__global__ void __launch_bounds__(kBlock)
    query_grads_kernel(AdditiveAttentionParams p, const T* q, const T* k, const T* values,
                       const T* v, const float* g, const std::int32_t* lengths, const float* probs,
                       const T* dout, float* ds, T* dq, GradMode q_mode, float* du_parts) {
  extern __shared__ float shared[];
  const std::int64_t A = p.width, S = p.keys, B = p.batch, V = p.value_width;
  float* u = shared;
  float* query = u + A;
  float* prob = query + A;  // [S]
  float* grad = prob + S;   // [S]: dp, then ds
  const std::int64_t t = blockIdx.x, b = blockIdx.y, row = t * B + b;
  const std::int64_t scores = (b * p.queries + t) * S;
  load_score_vector(v, g, A, u);
  const std::int64_t length = clamp_length(lengths, b, S);
  for (std::int64_t h = threadIdx.x; h < A; h += blockDim.x) query[h] = to_f32(q[row * A + h]);
  for (std::int64_t s = threadIdx.x; s < length; s += blockDim.x) prob[s] = probs[scores + s];
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  for (std::int64_t s = threadIdx.x / kWarp; s < length; s += warps) {
    const T* value = values + (s * B + b) * V;
    float acc = 0;
    for (std::int64_t j = lane; j < V; j += kWarp)
      acc += to_f32(dout[row * V + j]) * to_f32(value[j]);
    acc = warp_reduce(acc, Add{});
    if (lane == 0) grad[s] = acc;
  }
  __syncthreads();
  float weighted = 0;
  for (std::int64_t s = threadIdx.x; s < length; s += blockDim.x) weighted += prob[s] * grad[s];
  weighted = block_reduce(weighted, Add{});
  for (std::int64_t s = threadIdx.x; s < S; s += blockDim.x) {
    const float d = s < length ? prob[s] * (grad[s] - weighted) : 0.0f;
    ds[scores + s] = d;
    if (s < length) grad[s] = d;
  }
  __syncthreads();
  if (dq == nullptr && du_parts == nullptr) return;
  for (std::int64_t h = threadIdx.x; h < A; h += blockDim.x) {
    float slope = 0, along = 0;
    for (std::int64_t s = 0; s < length; ++s) {
      const float e = tanhf(query[h] + to_f32(k[(s * B + b) * A + h]));
      slope += grad[s] * (1.0f - e * e);
      along += grad[s] * e;
    }
    if (dq != nullptr) put(dq + row * A + h, u[h] * slope, q_mode);
    if (du_parts != nullptr) du_parts[(b * p.queries + t) * A + h] = along;
  }
}

// Grid (keys, batch): dk and dvalues of key s of sample b, summed over the queries (0 past the
// sample's length).
template <class T>
__global__ void __launch_bounds__(kBlock)
    key_grads_kernel(AdditiveAttentionParams p, const T* q, const T* k, const T* v, const float* g,
                     const std::int32_t* lengths, const float* probs, const T* dout,
                     const float* ds, T* dk, GradMode k_mode, T* dvalues, GradMode values_mode) {
  extern __shared__ float shared[];
  const std::int64_t A = p.width, S = p.keys, B = p.batch, V = p.value_width, Q = p.queries;
  float* u = shared;
  float* grad = u + A;     // [queries]: ds[b, :, s]
  float* prob = grad + Q;  // [queries]: probs[b, :, s]
  const std::int64_t s = blockIdx.x, b = blockIdx.y, row = s * B + b;
  load_score_vector(v, g, A, u);
  const bool valid = s < clamp_length(lengths, b, S);
  for (std::int64_t t = threadIdx.x; t < Q; t += blockDim.x) {
    grad[t] = valid ? ds[(b * Q + t) * S + s] : 0.0f;
    prob[t] = valid ? probs[(b * Q + t) * S + s] : 0.0f;
  }
  __syncthreads();
  const std::int64_t queries = valid ? Q : 0;
  if (dk != nullptr)
    for (std::int64_t h = threadIdx.x; h < A; h += blockDim.x) {
      const float key = to_f32(k[row * A + h]);
      float slope = 0;
      for (std::int64_t t = 0; t < queries; ++t) {
        const float e = tanhf(to_f32(q[(t * B + b) * A + h]) + key);
        slope += grad[t] * (1.0f - e * e);
      }
      put(dk + row * A + h, u[h] * slope, k_mode);
    }
  if (dvalues != nullptr)
    for (std::int64_t j = threadIdx.x; j < V; j += blockDim.x) {
      float acc = 0;
      for (std::int64_t t = 0; t < queries; ++t) acc += prob[t] * to_f32(dout[(t * B + b) * V + j]);
      put(dvalues + row * V + j, acc, values_mode);
    }
}

// Blocks of (kLanes, kLanes) threads: du[h] = the sum over the rows of du_parts [rows, width], in
// double, in lane_column_sums' fixed order.
__global__ void du_kernel(const float* du_parts, std::int64_t rows, std::int64_t width, float* du) {
  const std::int64_t h = static_cast<std::int64_t>(blockIdx.x) * kLanes + threadIdx.x;
  const bool in_range = h < width;
  const LaneSums<double, 1> sums = lane_column_sums<double, 1>(rows, in_range, [&](std::int64_t r) {
    return LaneSums<float, 1>{{du_parts[r * width + h]}};
  });
  if (in_range && threadIdx.y == 0) du[h] = static_cast<float>(sums.v[0]);
}

// One block: dv = (g / |v|) (du - v^ (v^ . du)) and dg = v^ . du, v^ = v / |v|.
template <class T>
__global__ void __launch_bounds__(kBlock)
    score_vector_grads_kernel(const T* v, const float* g, const float* du, std::int64_t width,
                              T* dv, float* dg, GradMode mode) {
  float squares = 0;
  for (std::int64_t h = threadIdx.x; h < width; h += blockDim.x)
    squares += to_f32(v[h]) * to_f32(v[h]);
  const float norm = sqrtf(block_reduce(squares, Add{}));
  float along = 0;
  for (std::int64_t h = threadIdx.x; h < width; h += blockDim.x)
    along += to_f32(v[h]) / norm * du[h];
  along = block_reduce(along, Add{});
  const float scale = g[0] / norm;
  if (dv != nullptr)
    for (std::int64_t h = threadIdx.x; h < width; h += blockDim.x)
      put(dv + h, scale * (du[h] - to_f32(v[h]) / norm * along), mode);
  if (dg != nullptr && threadIdx.x == 0) put(dg, along, mode);
}

template <class T>
T* data_or_null(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data()) : nullptr;
}

void require_fits(const AdditiveAttentionParams& p, const char* op) {
  if (std::string why = additive_attention_refusal(p); !why.empty())
    throw Error(ErrorKind::kUsage, std::string(op) + ": " + why);
}

}  // namespace

void CudaBackend::additive_attention_forward_impl(const AdditiveAttentionParams& p, const Tensor& q,
                                                  const Tensor& k, const Tensor& values,
                                                  const Tensor& v, const Tensor& g,
                                                  const Tensor& lengths, const Tensor& o,
                                                  const Tensor& probs) {
  activate();
  const char* op = "additive_attention_forward";
  require_fits(p, op);
  for (const auto& [t, what] : {std::pair{&q, "q"},
                                {&k, "k"},
                                {&values, "values"},
                                {&v, "v"},
                                {&g, "g"},
                                {&lengths, "lengths"},
                                {&o, "o"},
                                {&probs, "probs"}})
    require_here(*t, op, what);
  const std::size_t shared = static_cast<std::size_t>(2 * p.width + p.keys) * sizeof(float);
  const dim3 grid(static_cast<unsigned>(p.queries), static_cast<unsigned>(p.batch));
  dispatch_float(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward_kernel<T><<<grid, kBlock, shared, stream_>>>(
        p, static_cast<const T*>(q.data()), static_cast<const T*>(k.data()),
        static_cast<const T*>(values.data()), static_cast<const T*>(v.data()), g.data_as<float>(),
        lengths.data_as<std::int32_t>(), static_cast<T*>(o.data()), probs.data_as<float>());
    CUDA_CHECK_LAUNCH();
  });
}

void CudaBackend::additive_attention_backward_impl(const AdditiveAttentionParams& p,
                                                   const Tensor& q, const Tensor& k,
                                                   const Tensor& values, const Tensor& v,
                                                   const Tensor& g, const Tensor& lengths,
                                                   const Tensor& probs, const Tensor& dout,
                                                   const AdditiveAttentionGrads& grads) {
  activate();
  const char* op = "additive_attention_backward";
  require_fits(p, op);
  for (const auto& [t, what] : {std::pair{&q, "q"},
                                {&k, "k"},
                                {&values, "values"},
                                {&v, "v"},
                                {&g, "g"},
                                {&lengths, "lengths"},
                                {&probs, "probs"},
                                {&dout, "dout"},
                                {&grads.dq, "dq"},
                                {&grads.dk, "dk"},
                                {&grads.dvalues, "dvalues"},
                                {&grads.dv, "dv"},
                                {&grads.dg, "dg"}})
    if (t->defined()) require_here(*t, op, what);
  const bool want_u = grads.dv.defined() || grads.dg.defined();
  const std::int64_t rows = p.batch * p.queries;
  // The workspace: ds [rows, keys], then du's shares [rows, width] and du [width] where wanted.
  const std::size_t ds_bytes = align_up(static_cast<std::size_t>(rows * p.keys) * sizeof(float));
  const std::size_t parts_bytes =
      want_u ? align_up(static_cast<std::size_t>(rows * p.width) * sizeof(float)) : 0;
  const std::size_t du_bytes = want_u ? static_cast<std::size_t>(p.width) * sizeof(float) : 0;
  auto* scratch = static_cast<std::byte*>(workspace(ds_bytes + parts_bytes + du_bytes));
  auto* ds = reinterpret_cast<float*>(scratch);
  float* du_parts = want_u ? reinterpret_cast<float*>(scratch + ds_bytes) : nullptr;
  float* du = want_u ? reinterpret_cast<float*>(scratch + ds_bytes + parts_bytes) : nullptr;
  const dim3 query_grid(static_cast<unsigned>(p.queries), static_cast<unsigned>(p.batch));
  const dim3 key_grid(static_cast<unsigned>(p.keys), static_cast<unsigned>(p.batch));
  const std::size_t query_shared =
      static_cast<std::size_t>(2 * p.width + 2 * p.keys) * sizeof(float);
  const std::size_t key_shared = static_cast<std::size_t>(p.width + 2 * p.queries) * sizeof(float);
  const auto* l = lengths.data_as<std::int32_t>();
  dispatch_float(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* pq = static_cast<const T*>(q.data());
    const auto* pk = static_cast<const T*>(k.data());
    const auto* pv = static_cast<const T*>(v.data());
    const auto* pg = g.data_as<float>();
    const auto* pdo = static_cast<const T*>(dout.data());
    query_grads_kernel<T><<<query_grid, kBlock, query_shared, stream_>>>(
        p, pq, pk, static_cast<const T*>(values.data()), pv, pg, l, probs.data_as<float>(), pdo, ds,
        data_or_null<T>(grads.dq), grads.q_mode, du_parts);
    CUDA_CHECK_LAUNCH();
    if (grads.dk.defined() || grads.dvalues.defined()) {
      key_grads_kernel<T><<<key_grid, kBlock, key_shared, stream_>>>(
          p, pq, pk, pv, pg, l, probs.data_as<float>(), pdo, ds, data_or_null<T>(grads.dk),
          grads.k_mode, data_or_null<T>(grads.dvalues), grads.values_mode);
      CUDA_CHECK_LAUNCH();
    }
    if (want_u) {
      const auto column_blocks = static_cast<unsigned>((p.width + kLanes - 1) / kLanes);
      du_kernel<<<column_blocks, dim3(kLanes, kLanes), 0, stream_>>>(du_parts, rows, p.width, du);
      CUDA_CHECK_LAUNCH();
      score_vector_grads_kernel<T>
          <<<1, kBlock, 0, stream_>>>(pv, pg, du, p.width, data_or_null<T>(grads.dv),
                                      data_or_null<float>(grads.dg), grads.param_mode);
      CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace dlbench::backend::cuda
