// Scaled dot-product attention on CUDA: which implementation runs (AttentionParams::kernel), and
// the unfused path, the reference and what runs where neither fused one (cuDNN's, in
// cudnn_attention.h; ours, in cuda_flash_attention.cu) takes the call, through the backend's
// workspace:
//   forward:  S = scale Q K^T (f32) | a warp per row: masked softmax -> P (dtype), stats | O = P V
//   backward: S again | P from S and stats | dV (+)= P^T dO | dP = dO V^T (f32) |
//             a warp per row: dS = scale P (dP - rowsum(P dP)) over P's buffer |
//             dQ (+)= dS K | dK (+)= dS^T Q
// Each product runs over every (sample, head) pair in one cuBLAS call with pointer arrays: a head's
// rows are heads * head_dim apart inside a sample, and the next sample's start is not one stride
// further on, so cuBLASLt's single batch stride cannot walk them. A small kernel writes the
// arrays on the stream just before each product, so a recorded graph replays them too.
// Scores and their softmax stay in f32; P and dS are rounded to the dtype before their products,
// as fused attention kernels round them. Every reduction is a fixed shuffle tree.
#include <cmath>

#include "engine/backend/attention_mask.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_flash_attention.h"
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

// Where the (sample, head) matrices of a tensor start: sample n, head h at
// base + n * sample_stride + h * head_stride (bytes), rows `ld` elements apart.
struct Matrices {
  const char* base;
  std::int64_t sample_stride, head_stride;
  int ld;
  cudaDataType_t type;
};

struct PointerJob {
  Matrices a, b, c;
};

__global__ void fill_pointers(PointerJob job, int heads, int count, const void** a, const void** b,
                              void** c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::int64_t n = i / heads, h = i % heads;
  a[i] = job.a.base + n * job.a.sample_stride + h * job.a.head_stride;
  b[i] = job.b.base + n * job.b.sample_stride + h * job.b.head_stride;
  c[i] = const_cast<char*>(job.c.base) + n * job.c.sample_stride + h * job.c.head_stride;
}

// The shape and masks the row kernels need.
struct RowShape {
  std::int64_t rows, heads, seq_q, seq_kv;
  bool causal;
  const std::int32_t *q_lengths, *kv_lengths;  // null: every position
};

// The score row this warp owns (rows of [batch, heads, seq_q]); past the last, -1.
__device__ __forceinline__ std::int64_t warp_score_row(const RowShape& sh) {
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  return row < sh.rows ? row : -1;
}

// How many keys the query of score row `row` sees.
__device__ __forceinline__ std::int64_t row_keys(const RowShape& sh, std::int64_t row) {
  const std::int64_t i = row % sh.seq_q, n = row / sh.seq_q / sh.heads;
  return visible_keys(i, clamp_length(sh.q_lengths, n, sh.seq_q),
                      clamp_length(sh.kv_lengths, n, sh.seq_kv), sh.causal);
}

// P = exp(S - stats) over the visible keys, 0 past them. Without kGivenStats the row's
// log-sum-exp is computed and written to stats (0 for a row that sees no key); with it, read.
template <class T, bool kGivenStats>
__global__ void softmax_rows(const float* s, T* prob, float* stats, RowShape sh) {
  const std::int64_t row = warp_score_row(sh);
  if (row < 0) return;
  const int lane = threadIdx.x % kWarp;
  const std::int64_t keys = row_keys(sh, row);
  const float* sr = s + row * sh.seq_kv;
  float lse;
  if constexpr (kGivenStats) {
    lse = stats[row];
  } else {
    float max = -INFINITY;
    for (std::int64_t j = lane; j < keys; j += kWarp) max = fmaxf(max, sr[j]);
    max = warp_reduce(max, Max{});
    float sum = 0.0f;
    for (std::int64_t j = lane; j < keys; j += kWarp) sum += expf(sr[j] - max);
    sum = warp_reduce(sum, Add{});
    lse = keys > 0 ? max + logf(sum) : 0.0f;
    if (lane == 0) stats[row] = lse;
  }
  T* pr = prob + row * sh.seq_kv;
  for (std::int64_t j = lane; j < sh.seq_kv; j += kWarp)
    pr[j] = from_f32<T>(j < keys ? expf(sr[j] - lse) : 0.0f);
}

// dS = scale P (dP - D), D = sum_j P_j dP_j, with P recomputed in f32 from S and stats.
template <class T>
__global__ void softmax_backward_rows(const float* s, const float* dp, const float* stats, T* ds,
                                      RowShape sh, float scale) {
  const std::int64_t row = warp_score_row(sh);
  if (row < 0) return;
  const int lane = threadIdx.x % kWarp;
  const std::int64_t keys = row_keys(sh, row);
  const float* sr = s + row * sh.seq_kv;
  const float* dpr = dp + row * sh.seq_kv;
  const float lse = stats[row];
  float d = 0.0f;
  for (std::int64_t j = lane; j < keys; j += kWarp) d += expf(sr[j] - lse) * dpr[j];
  d = warp_reduce(d, Add{});
  T* out = ds + row * sh.seq_kv;
  for (std::int64_t j = lane; j < sh.seq_kv; j += kWarp)
    out[j] = from_f32<T>(j < keys ? scale * expf(sr[j] - lse) * (dpr[j] - d) : 0.0f);
}

// o_i = 0 and stats 0 for the score rows that see no key (past q_lengths, or kv_lengths 0),
// as the op promises, where a fused kernel leaves them otherwise (cuDNN writes -inf statistics
// there and no output row). o is [batch * seq_q, heads * head_dim].
template <class T>
__global__ void clear_keyless_rows(T* o, float* stats, RowShape sh, std::int64_t head_dim) {
  const std::int64_t row = warp_score_row(sh);
  if (row < 0 || row_keys(sh, row) > 0) return;
  const int lane = threadIdx.x % kWarp;
  const std::int64_t i = row % sh.seq_q, h = row / sh.seq_q % sh.heads;
  const std::int64_t n = row / sh.seq_q / sh.heads;
  T* out = o + ((n * sh.seq_q + i) * sh.heads + h) * head_dim;
  for (std::int64_t c = lane; c < head_dim; c += kWarp) out[c] = from_f32<T>(0.0f);
  if (lane == 0) stats[row] = 0.0f;
}

// cuDNN takes the lengths as its products' extents: clamped into [0, seq] first (as the unfused
// path reads them: Backend::attention_forward), into out ([batch] of each).
__global__ void clamp_lengths(const std::int32_t* q, const std::int32_t* kv, std::int32_t* out,
                              std::int64_t batch, std::int64_t seq_q, std::int64_t seq_kv) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= batch) return;
  out[n] = static_cast<std::int32_t>(clamp_length(q, n, seq_q));
  out[batch + n] = static_cast<std::int32_t>(clamp_length(kv, n, seq_kv));
}

// The operands of one op call and the workspace's regions.
struct Attention {
  const AttentionParams& p;
  DType dtype;
  cudaDataType_t type;
  std::int64_t count;  // (sample, head) pairs
  std::size_t score_bytes, prob_bytes, pointer_bytes;
  char* workspace;

  const std::int32_t *q_lengths, *kv_lengths;  // null: every position

  Attention(const AttentionParams& params, DType d, const Tensor& q_len, const Tensor& kv_len)
      : p(params),
        dtype(d),
        type(cuda_dtype(d, "attention")),
        count(p.batch * p.heads),
        score_bytes(align_up(static_cast<std::size_t>(count * p.seq_q * p.seq_kv) * 4)),
        prob_bytes(align_up(static_cast<std::size_t>(count * p.seq_q * p.seq_kv) * size_of(d))),
        pointer_bytes(align_up(static_cast<std::size_t>(count) * 3 * sizeof(void*))),
        workspace(nullptr),
        q_lengths(q_len.defined() ? q_len.data_as<std::int32_t>() : nullptr),
        kv_lengths(kv_len.defined() ? kv_len.data_as<std::int32_t>() : nullptr) {}
  // Scores, then (backward) their gradients in f32, then P or dS in the dtype, then pointers.
  std::size_t bytes() const { return 2 * score_bytes + prob_bytes + pointer_bytes; }
  float* scores() const { return reinterpret_cast<float*>(workspace); }
  float* score_grads() const { return reinterpret_cast<float*>(workspace + score_bytes); }
  char* probs() const { return workspace + 2 * score_bytes; }
  void** pointers() const {
    return reinterpret_cast<void**>(workspace + 2 * score_bytes + prob_bytes);
  }

  // A [seq, heads * head_dim] token tensor's per-(sample, head) [seq, head_dim] matrices.
  Matrices tokens(const Tensor& t, std::int64_t seq) const {
    const std::int64_t elt = size_of(dtype);
    return {static_cast<const char*>(t.data()), seq * p.width() * elt, p.head_dim * elt,
            static_cast<int>(p.width()), type};
  }
  // A per-(sample, head) [seq_q, seq_kv] score-shaped buffer, f32 or the dtype.
  Matrices score_like(const void* base, bool f32) const {
    const std::int64_t elt = f32 ? 4 : size_of(dtype);
    const std::int64_t per_head = p.seq_q * p.seq_kv * elt;
    return {static_cast<const char*>(base), p.heads * per_head, per_head,
            static_cast<int>(p.seq_kv), f32 ? CUDA_R_32F : type};
  }
  RowShape rows() const {
    return {count * p.seq_q, p.heads, p.seq_q, p.seq_kv, p.causal, q_lengths, kv_lengths};
  }
};

// C = alpha op(A) op(B) + beta C for every (sample, head), in row-major terms: cuBLAS is
// column-major, where a row-major matrix reads as its transpose, so it computes
// C^T = op(B)^T op(A)^T with the operands swapped and the same transposition flags.
void batched_product(cublasHandle_t handle, cudaStream_t stream, const Attention& at, bool trans_a,
                     bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                     const Matrices& a, const Matrices& b, float beta, const Matrices& c) {
  void** ptrs = at.pointers();
  const auto count = static_cast<int>(at.count);
  fill_pointers<<<static_cast<unsigned>((count + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
      PointerJob{a, b, c}, static_cast<int>(at.p.heads), count, const_cast<const void**>(ptrs),
      const_cast<const void**>(ptrs + count), ptrs + 2 * count);
  CUDA_CHECK_LAUNCH();
  const cublasComputeType_t compute = at.dtype == DType::kF32 && at.p.math == MathMode::kTf32
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
  CUBLAS_CHECK(cublasGemmBatchedEx(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                                   static_cast<int>(m), static_cast<int>(k), &alpha, ptrs + count,
                                   b.type, b.ld, ptrs, a.type, a.ld, &beta, ptrs + 2 * count,
                                   c.type, c.ld, count, compute, CUBLAS_GEMM_DEFAULT));
}

// S = scale Q K^T, then P = its masked softmax in the dtype; the statistics are written
// (forward) or read (kGivenStats: backward's recomputation).
template <bool kGivenStats>
void scores_and_probabilities(cublasHandle_t handle, cudaStream_t stream, const Attention& at,
                              const Tensor& q, const Tensor& k, float* stats) {
  const AttentionParams& p = at.p;
  batched_product(handle, stream, at, false, true, p.seq_q, p.seq_kv, p.head_dim, p.scale,
                  at.tokens(q, p.seq_q), at.tokens(k, p.seq_kv), 0.0f,
                  at.score_like(at.scores(), true));
  const RowShape sh = at.rows();
  dispatch_float(q.dtype(), "attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_rows<T, kGivenStats><<<warp_row_blocks(sh.rows), kBlock, 0, stream>>>(
        at.scores(), reinterpret_cast<T*>(at.probs()), stats, sh);
  });
  CUDA_CHECK_LAUNCH();
}

// The lengths a cuDNN plan binds: none where the call has none (it binds full lengths), else
// both clamped into the plan's scratch in `workspace`.
SampleLengths cudnn_lengths(const CudnnAttention& plan, const Attention& at, void* workspace,
                            cudaStream_t stream) {
  if (at.q_lengths == nullptr && at.kv_lengths == nullptr) return {};
  std::int32_t* out = plan.length_scratch(workspace);
  const AttentionParams& p = at.p;
  clamp_lengths<<<static_cast<unsigned>((p.batch + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
      at.q_lengths, at.kv_lengths, out, p.batch, p.seq_q, p.seq_kv);
  CUDA_CHECK_LAUNCH();
  return {out, out + p.batch};
}

}  // namespace

const CudnnAttention* CudaBackend::cudnn_attention(const AttentionParams& p, DType dtype,
                                                   CudnnAttention::Pass pass, std::string* why) {
  const AttentionKey key{p.batch, p.heads,  p.seq_q, p.seq_kv, p.head_dim,
                         p.scale, p.causal, dtype,   pass};
  auto it = attention_plans_.find(key);
  if (it == attention_plans_.end())
    it = attention_plans_
             .emplace(key, std::make_unique<CudnnAttention>(cudnn_, allocator_, p, dtype, pass))
             .first;
  if (it->second->ok()) return it->second.get();
  *why = it->second->unsupported_reason();
  return nullptr;
}

CudaBackend::AttentionRoute CudaBackend::attention_route(
    const AttentionParams& p, DType dtype, CudnnAttention::Pass pass,
    std::initializer_list<const Tensor*> operands, GradMode mode) {
  const bool backward = pass == CudnnAttention::Pass::kBackward;
  const AttentionKernel kernel = p.kernel;
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::kUsage, std::string("attention asked for the ") + to_string(kernel) +
                                       " kernel, which cannot run this call: " + why);
  };
  if (kernel == AttentionKernel::kFlash) {
    if (!flash_attention_applies(p, operands, backward))
      refuse("its dtype, head width, alignment, grid or shared memory is out of its range");
    return {nullptr, true};
  }
  if (kernel != AttentionKernel::kAuto && kernel != AttentionKernel::kCudnn) return {};
  std::string why;
  if (backward && mode == GradMode::kAccumulate) {
    why = "cuDNN's attention overwrites its gradients and has no accumulating form";
  } else if (!CudnnAttention::takes(operands)) {
    why = "an operand is not 16-byte aligned";
  } else {
    why = cudnn_attention_refusal(p, dtype);
    if (why.empty())
      if (const CudnnAttention* plan = cudnn_attention(p, dtype, pass, &why)) return {plan, false};
  }
  if (kernel == AttentionKernel::kCudnn) refuse(why);
  return {};
}

void CudaBackend::attention_forward_impl(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                         const Tensor& v, const Tensor& q_lengths,
                                         const Tensor& kv_lengths, const Tensor& o,
                                         const Tensor& stats) {
  const char* op = "attention_forward";
  activate();
  for (const Tensor* t : {&q, &k, &v, &o, &stats}) require_here(*t, op, "operand");
  for (const Tensor* t : {&q_lengths, &kv_lengths})
    if (t->defined()) require_here(*t, op, "lengths");
  require_float(q, op, "q");
  Attention at(p, q.dtype(), q_lengths, kv_lengths);
  const AttentionRoute route = attention_route(p, q.dtype(), CudnnAttention::Pass::kForward,
                                               {&q, &k, &v, &o}, GradMode::kOverwrite);
  if (route.cudnn != nullptr) {
    void* scratch = workspace(route.cudnn->workspace_bytes());
    route.cudnn->forward(cudnn_, q, k, v, cudnn_lengths(*route.cudnn, at, scratch, stream_), o,
                         stats.data_as<float>(), scratch);
    if (at.q_lengths == nullptr && at.kv_lengths == nullptr) return;  // every row sees keys
    const RowShape sh = at.rows();
    dispatch_float(q.dtype(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      clear_keyless_rows<T><<<warp_row_blocks(sh.rows), kBlock, 0, stream_>>>(
          o.data_as<T>(), stats.data_as<float>(), sh, p.head_dim);
    });
    CUDA_CHECK_LAUNCH();
    return;
  }
  if (route.flash) {
    flash_attention_forward(p, q, k, v, at.q_lengths, at.kv_lengths, o, stats.data_as<float>(),
                            stream_);
    return;
  }
  at.workspace = static_cast<char*>(workspace(at.bytes()));
  scores_and_probabilities<false>(cublas(), stream_, at, q, k, stats.data_as<float>());
  batched_product(cublas(), stream_, at, false, false, p.seq_q, p.head_dim, p.seq_kv, 1.0f,
                  at.score_like(at.probs(), false), at.tokens(v, p.seq_kv), 0.0f,
                  at.tokens(o, p.seq_q));
}

void CudaBackend::attention_backward_impl(const AttentionParams& p, const Tensor& q,
                                          const Tensor& k, const Tensor& v, const Tensor& o,
                                          const Tensor& dout, const Tensor& stats,
                                          const Tensor& q_lengths, const Tensor& kv_lengths,
                                          const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                          GradMode mode) {
  const char* op = "attention_backward";
  activate();
  for (const Tensor* t : {&q, &k, &v, &o, &dout, &stats, &dq, &dk, &dv})
    require_here(*t, op, "operand");
  for (const Tensor* t : {&q_lengths, &kv_lengths})
    if (t->defined()) require_here(*t, op, "lengths");
  require_float(q, op, "q");
  Attention at(p, q.dtype(), q_lengths, kv_lengths);
  const AttentionRoute route = attention_route(p, q.dtype(), CudnnAttention::Pass::kBackward,
                                               {&q, &k, &v, &o, &dout, &dq, &dk, &dv}, mode);
  if (route.cudnn != nullptr) {
    void* scratch = workspace(route.cudnn->workspace_bytes());
    route.cudnn->backward(cudnn_, q, k, v, o, dout, stats.data_as<float>(),
                          cudnn_lengths(*route.cudnn, at, scratch, stream_), dq, dk, dv, scratch,
                          stream_);
    return;
  }
  if (route.flash) {
    flash_attention_backward(p, q, k, v, o, dout, stats.data_as<float>(), at.q_lengths,
                             at.kv_lengths, dq, dk, dv, mode,
                             workspace(flash_attention_backward_workspace(p)), stream_);
    return;
  }
  const RowShape sh = at.rows();
  at.workspace = static_cast<char*>(workspace(at.bytes()));
  cublasHandle_t handle = cublas();
  const float beta = mode == GradMode::kAccumulate ? 1.0f : 0.0f;
  const Matrices probs = at.score_like(at.probs(), false);
  scores_and_probabilities<true>(handle, stream_, at, q, k, stats.data_as<float>());
  // dV = P^T dO: [seq_kv, seq_q] x [seq_q, head_dim].
  batched_product(handle, stream_, at, true, false, p.seq_kv, p.head_dim, p.seq_q, 1.0f, probs,
                  at.tokens(dout, p.seq_q), beta, at.tokens(dv, p.seq_kv));
  // dP = dO V^T: [seq_q, head_dim] x [head_dim, seq_kv], in f32.
  batched_product(handle, stream_, at, false, true, p.seq_q, p.seq_kv, p.head_dim, 1.0f,
                  at.tokens(dout, p.seq_q), at.tokens(v, p.seq_kv), 0.0f,
                  at.score_like(at.score_grads(), true));
  dispatch_float(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_backward_rows<T><<<warp_row_blocks(sh.rows), kBlock, 0, stream_>>>(
        at.scores(), at.score_grads(), stats.data_as<float>(), reinterpret_cast<T*>(at.probs()), sh,
        p.scale);
  });
  CUDA_CHECK_LAUNCH();
  // dQ = dS K and dK = dS^T Q (the scale is in dS).
  batched_product(handle, stream_, at, false, false, p.seq_q, p.head_dim, p.seq_kv, 1.0f, probs,
                  at.tokens(k, p.seq_kv), beta, at.tokens(dq, p.seq_q));
  batched_product(handle, stream_, at, true, false, p.seq_kv, p.head_dim, p.seq_q, 1.0f, probs,
                  at.tokens(q, p.seq_q), beta, at.tokens(dk, p.seq_kv));
}

}  // namespace dlbench::backend::cuda
