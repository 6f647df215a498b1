// The composite attention graphs of cudnn_attention.h, their plans and their execution.
#include "engine/backend/cuda/cudnn_attention.h"

#include <array>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/core/error.h"
#include "engine/core/memory.h"

namespace dlbench::backend::cuda {
namespace {

// The graph's memory and by-value tensors, as the variant pack names them; virtual ones are
// numbered from kFirstVirtual on.
enum Uid : std::int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kQLengths,
  kKvLengths,
  kNegativeInfinity,
  kOne,
  kDout,
  kDq,
  kDk,
  kDv,
  kRowSums,
  kDqSums,
  kFirstVirtual = 100,
};

// A 4-D tensor's dims and strides.
struct Layout {
  std::vector<std::int64_t> dims, strides;
};

// [batch, heads, seq, head_dim] over our [batch * seq, heads * head_dim] token rows.
Layout tokens(const AttentionParams& p, std::int64_t seq) {
  return {{p.batch, p.heads, seq, p.head_dim}, {seq * p.width(), p.head_dim, p.width(), 1}};
}
// The same matrix seen transposed: the last two dims and strides swapped.
Layout transposed(Layout t) {
  std::swap(t.dims[2], t.dims[3]);
  std::swap(t.strides[2], t.strides[3]);
  return t;
}
// [batch, heads, seq_q, seq_kv] packed: the scores (and, transposed, their P^T and dS^T).
Layout scores(const AttentionParams& p) {
  return {{p.batch, p.heads, p.seq_q, p.seq_kv},
          {p.heads * p.seq_q * p.seq_kv, p.seq_q * p.seq_kv, p.seq_kv, 1}};
}
// One f32 per score row: the statistics, the rows' maxima and sums, D.
Layout rows(const AttentionParams& p) {
  return {{p.batch, p.heads, p.seq_q, 1}, {p.heads * p.seq_q, p.seq_q, 1, 1}};
}
Layout per_sample(const AttentionParams& p) {
  return {{p.batch, 1, 1, 1}, {1, 1, 1, 1}};
}
const Layout kScalar{{1, 1, 1, 1}, {1, 1, 1, 1}};

// Builds one graph's tensors and operations into an owner that keeps them alive.
class GraphBuilder {
 public:
  GraphBuilder(std::deque<BackendDescriptor>& parts, const AttentionParams& p, cudnnDataType_t io)
      : parts_(parts), p_(p), io_(io) {}

  const BackendDescriptor& memory(const char* name, Uid uid, const Layout& l,
                                  cudnnDataType_t type) {
    return keep(make_tensor({name, uid, l.dims, l.strides, type, Storage::kMemory}));
  }
  const BackendDescriptor& scalar(const char* name, Uid uid) {
    return keep(make_tensor(
        {name, uid, kScalar.dims, kScalar.strides, CUDNN_DATA_FLOAT, Storage::kByValue}));
  }
  const BackendDescriptor& temporary(const char* name, const Layout& l, cudnnDataType_t type) {
    return keep(make_tensor({name, next_virtual_++, l.dims, l.strides, type, Storage::kVirtual}));
  }

  // y = mode(x) or mode(x, b), into `y`.
  void pointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x, const BackendDescriptor* b,
                 const BackendDescriptor& y, cudnnDataType_t compute = CUDNN_DATA_FLOAT,
                 std::int64_t axis = -1) {
    const BackendDescriptor& pw = keep(make_pointwise(mode, compute, axis));
    add(make_pointwise_op(pw, x, b, y));
  }
  // A new f32 temporary shaped as `l` holding mode(x[, b]).
  const BackendDescriptor& pointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x,
                                     const BackendDescriptor* b, const Layout& l,
                                     const char* name) {
    const BackendDescriptor& y = temporary(name, l, CUDNN_DATA_FLOAT);
    pointwise(mode, x, b, y);
    return y;
  }
  void matmul(const BackendDescriptor& a, const BackendDescriptor& b, const BackendDescriptor& c,
              const MatmulExtents& extents) {
    const BackendDescriptor& mm = keep(make_matmul(extents.padding));
    add(make_matmul_op(mm, a, b, c, extents));
  }
  const BackendDescriptor& reduce(cudnnReduceTensorOp_t op, const BackendDescriptor& x,
                                  const char* name) {
    const BackendDescriptor& y = temporary(name, rows(p_), CUDNN_DATA_FLOAT);
    const BackendDescriptor& r = keep(make_reduction(op));
    add(make_reduction_op(r, x, y));
    return y;
  }
  void reshape(const BackendDescriptor& x, const BackendDescriptor& y) {
    add(make_reshape_op(x, y));
  }

  // The scores with -inf where a key is hidden: past each sample's lengths (rows past q_lengths,
  // columns past kv_lengths), then, under a causal mask, past the row's own position (top-left:
  // query i sees keys 0..i). Spelled as cuDNN's attention patterns spell them: generated
  // indices, comparisons, a select.
  const BackendDescriptor& mask(const BackendDescriptor& s, const BackendDescriptor& q_len,
                                const BackendDescriptor& kv_len) {
    const Layout l = scores(p_);
    const BackendDescriptor& row_in = compare(CUDNN_POINTWISE_CMP_LT, index(s, 2), q_len);
    const BackendDescriptor& column_in = compare(CUDNN_POINTWISE_CMP_LT, index(s, 3), kv_len);
    const BackendDescriptor& visible = temporary("visible", l, CUDNN_DATA_BOOLEAN);
    pointwise(CUDNN_POINTWISE_LOGICAL_AND, row_in, &column_in, visible, CUDNN_DATA_BOOLEAN);
    const BackendDescriptor& padded = hide(s, visible);
    if (!p_.causal) return padded;
    return hide(padded, compare(CUDNN_POINTWISE_CMP_GE, index(padded, 2), index(padded, 3)));
  }
  // The tensors both passes bind: q, k^T, o and the statistics, the lengths, the scale.
  struct Shared {
    const BackendDescriptor &q, &kt, &o, &stats, &q_len, &kv_len, &scale;
  };
  Shared shared() {
    const AttentionParams& p = p_;
    return {memory("q", kQ, tokens(p, p.seq_q), io_),
            memory("k^T", kK, transposed(tokens(p, p.seq_kv)), io_),
            memory("o", kO, tokens(p, p.seq_q), io_),
            memory("stats", kStats, rows(p), CUDNN_DATA_FLOAT),
            memory("q lengths", kQLengths, per_sample(p), CUDNN_DATA_INT32),
            memory("kv lengths", kKvLengths, per_sample(p), CUDNN_DATA_INT32),
            scalar("scale", kScale)};
  }

  std::vector<const BackendDescriptor*>& operations() { return operations_; }

 private:
  const BackendDescriptor& keep(BackendDescriptor d) { return parts_.emplace_back(std::move(d)); }
  // The position of every score along one axis (2: its row, 3: its column), as i32.
  const BackendDescriptor& index(const BackendDescriptor& s, std::int64_t axis) {
    const BackendDescriptor& y = temporary("index", scores(p_), CUDNN_DATA_INT32);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, y, CUDNN_DATA_INT32, axis);
    return y;
  }
  const BackendDescriptor& compare(cudnnPointwiseMode_t mode, const BackendDescriptor& a,
                                   const BackendDescriptor& b) {
    const BackendDescriptor& y = temporary("comparison", scores(p_), CUDNN_DATA_BOOLEAN);
    pointwise(mode, a, &b, y, CUDNN_DATA_BOOLEAN);
    return y;
  }
  // s where `visible`, -inf elsewhere.
  const BackendDescriptor& hide(const BackendDescriptor& s, const BackendDescriptor& visible) {
    const BackendDescriptor& y = temporary("masked scores", scores(p_), CUDNN_DATA_FLOAT);
    const BackendDescriptor& select =
        keep(make_pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT));
    if (negative_infinity_ == nullptr) negative_infinity_ = &scalar("-inf", kNegativeInfinity);
    add(make_select_op(select, s, *negative_infinity_, visible, y));
    return y;
  }
  void add(BackendDescriptor op) { operations_.push_back(&keep(std::move(op))); }

  std::deque<BackendDescriptor>& parts_;
  const AttentionParams& p_;
  cudnnDataType_t io_;
  std::int64_t next_virtual_ = kFirstVirtual;
  const BackendDescriptor* negative_infinity_ = nullptr;  // one tensor per uid, however many masks
  std::vector<const BackendDescriptor*> operations_;
};

}  // namespace

std::string cudnn_attention_refusal(const AttentionParams& p, DType dtype) {
  if (dtype != DType::kF16 && dtype != DType::kBF16)
    return std::string("cuDNN's fused attention takes f16 or bf16, not ") + to_string(dtype);
  if (p.head_dim % 8 != 0 || p.head_dim > 128)
    return "cuDNN's fused attention takes head widths that are multiples of 8 up to 128, not " +
           std::to_string(p.head_dim);
  return {};
}

CudnnAttention::CudnnAttention(cudnnHandle_t handle, DeviceAllocator& allocator,
                               const AttentionParams& p, DType dtype, Pass pass)
    : p_(p), dtype_(dtype), pass_(pass), negative_infinity_(-INFINITY) {
  unsupported_reason_ = cudnn_attention_refusal(p, dtype);
  if (!unsupported_reason_.empty()) return;
  // What NVIDIA's own frontend refuses or works around for this graph: before 9.6 the dQ
  // accumulator had to be zeroed by the caller, 9.10.0-9.10.1 get the backward wrong, and
  // a backward of a single query and key has no engine.
  const std::size_t version = cudnnGetVersion();
  if (version < 90600) {
    unsupported_reason_ = "cuDNN's fused attention is used from cuDNN 9.6 on (this is " +
                          std::to_string(version) + ")";
    return;
  }
  if (pass == Pass::kBackward && (version == 91000 || version == 91001)) {
    unsupported_reason_ = "cuDNN 9.10.0 and 9.10.1 compute the fused attention's backward wrongly";
    return;
  }
  if (pass == Pass::kBackward && p.seq_q == 1 && p.seq_kv == 1) {
    unsupported_reason_ = "cuDNN's fused attention has no backward for one query and one key";
    return;
  }
  DLBENCH_CHECK(p.batch > 0 && p.heads > 0 && p.seq_q > 0 && p.seq_kv > 0,
                "attention needs a sample, a head and a position at least");
  std::vector<std::int32_t> full(static_cast<std::size_t>(p.batch), static_cast<int>(p.seq_q));
  full.resize(full.size() * 2, static_cast<int>(p.seq_kv));
  full_lengths_ = Buffer(allocator, full.size() * sizeof(std::int32_t));
  CUDA_CHECK(cudaMemcpy(full_lengths_.data(), full.data(), full.size() * sizeof(std::int32_t),
                        cudaMemcpyHostToDevice));
  // A cuDNN that cannot build this graph at all (an older version, another device) says so by
  // failing a descriptor; that is a refusal here, which the caller reports or falls back from.
  try {
    pass == Pass::kForward ? build_forward(handle) : build_backward(handle);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kResource || e.kind() == ErrorKind::kInternal) throw;
    unsupported_reason_ = std::string("cuDNN did not build the attention graph: ") + e.what();
    plan_.reset();
  }
}

void CudnnAttention::build_forward(cudnnHandle_t handle) {
  const cudnnDataType_t io = cudnn_dtype(dtype_, "attention");
  GraphBuilder g(parts_, p_, io);
  const AttentionParams& p = p_;
  const auto [q, kt, o, stats, q_len, kv_len, scale] = g.shared();
  const BackendDescriptor& v = g.memory("v", kV, tokens(p, p.seq_kv), io);

  const BackendDescriptor& s = g.temporary("scores", scores(p), CUDNN_DATA_FLOAT);
  g.matmul(q, kt, s, {&q_len, &kv_len, nullptr, 0.0});
  const BackendDescriptor& scaled =
      g.pointwise(CUDNN_POINTWISE_MUL, s, &scale, scores(p), "scaled scores");
  const BackendDescriptor& masked = g.mask(scaled, q_len, kv_len);
  const BackendDescriptor& max = g.reduce(CUDNN_REDUCE_TENSOR_MAX, masked, "row max");
  const BackendDescriptor& shifted =
      g.pointwise(CUDNN_POINTWISE_SUB, masked, &max, scores(p), "shifted scores");
  const BackendDescriptor& e = g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, scores(p), "exp");
  const BackendDescriptor& sum = g.reduce(CUDNN_REDUCE_TENSOR_ADD, e, "row sum");
  const BackendDescriptor& log = g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, rows(p), "log sum");
  g.pointwise(CUDNN_POINTWISE_ADD, max, &log, stats);
  const BackendDescriptor& prob = g.temporary("probabilities", scores(p), io);
  g.pointwise(CUDNN_POINTWISE_DIV, e, &sum, prob);
  g.matmul(prob, v, o, {&q_len, nullptr, &kv_len, std::nullopt});
  choose(handle, g.operations());
}

void CudnnAttention::build_backward(cudnnHandle_t handle) {
  const cudnnDataType_t io = cudnn_dtype(dtype_, "attention");
  GraphBuilder g(parts_, p_, io);
  const AttentionParams& p = p_;
  const auto [q, kt, o, stats, q_len, kv_len, scale] = g.shared();
  const BackendDescriptor& vt = g.memory("v^T", kV, transposed(tokens(p, p.seq_kv)), io);
  const BackendDescriptor& dout = g.memory("dout", kDout, tokens(p, p.seq_q), io);
  const BackendDescriptor& dq = g.memory("dq", kDq, tokens(p, p.seq_q), io);
  const BackendDescriptor& dk = g.memory("dk", kDk, tokens(p, p.seq_kv), io);
  const BackendDescriptor& dv = g.memory("dv", kDv, tokens(p, p.seq_kv), io);
  const BackendDescriptor& row_sums =
      g.memory("rowsum(dO o O)", kRowSums, rows(p), CUDNN_DATA_FLOAT);
  const Layout dq_sums_layout{
      {p.batch, p.heads, p.seq_q, p.head_dim},
      {p.heads * p.seq_q * p.head_dim, p.seq_q * p.head_dim, p.head_dim, 1}};
  const BackendDescriptor& dq_sums = g.memory("dq sums", kDqSums, dq_sums_layout, CUDNN_DATA_FLOAT);
  const BackendDescriptor& one = g.scalar("one", kOne);

  // D = rowsum(dO o O).
  const BackendDescriptor& products =
      g.pointwise(CUDNN_POINTWISE_MUL, dout, &o, tokens(p, p.seq_q), "dO o O");
  const BackendDescriptor& d = g.reduce(CUDNN_REDUCE_TENSOR_ADD, products, "rowsum");
  g.pointwise(CUDNN_POINTWISE_MUL, d, &one, row_sums);
  // P again from the scores and the statistics.
  const BackendDescriptor& s = g.temporary("scores", scores(p), CUDNN_DATA_FLOAT);
  // No padding value here, as cuDNN's own frontend builds this graph: the mask hides the rows
  // and columns past the lengths before anything reads them.
  g.matmul(q, kt, s, {&q_len, &kv_len, nullptr, std::nullopt});
  const BackendDescriptor& scaled =
      g.pointwise(CUDNN_POINTWISE_MUL, s, &scale, scores(p), "scaled scores");
  const BackendDescriptor& masked = g.mask(scaled, q_len, kv_len);
  const BackendDescriptor& shifted =
      g.pointwise(CUDNN_POINTWISE_SUB, masked, &stats, scores(p), "scores - stats");
  const BackendDescriptor& prob =
      g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, scores(p), "P");
  // dV = P^T dO.
  const BackendDescriptor& prob_t = g.temporary("P^T", transposed(scores(p)), io);
  g.reshape(prob, prob_t);
  g.matmul(prob_t, dout, dv, {&kv_len, nullptr, &q_len, std::nullopt});
  // dS = scale P (dO V^T - D).
  const BackendDescriptor& dp = g.temporary("dP", scores(p), CUDNN_DATA_FLOAT);
  g.matmul(dout, vt, dp, {&q_len, &kv_len, nullptr, std::nullopt});
  const BackendDescriptor& centred =
      g.pointwise(CUDNN_POINTWISE_SUB, dp, &row_sums, scores(p), "dP - D");
  const BackendDescriptor& weighted =
      g.pointwise(CUDNN_POINTWISE_MUL, centred, &prob, scores(p), "P (dP - D)");
  const BackendDescriptor& ds = g.pointwise(CUDNN_POINTWISE_MUL, weighted, &scale, scores(p), "dS");
  // dK = dS^T Q.
  const BackendDescriptor& ds_t = g.temporary("dS^T", transposed(scores(p)), io);
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, dk, {&kv_len, nullptr, &q_len, std::nullopt});
  // dQ = dS K, summed in f32, then cast.
  const BackendDescriptor& k = g.temporary("k", tokens(p, p.seq_kv), io);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_sums, {&q_len, nullptr, &kv_len, std::nullopt});
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_sums, nullptr, dq);
  choose(handle, g.operations());
}

void CudnnAttention::choose(cudnnHandle_t handle,
                            std::span<const BackendDescriptor* const> operations) {
  Refusable graph = make_operation_graph(handle, operations);
  if (!graph.descriptor) {
    unsupported_reason_ = "cuDNN has no pattern for the attention graph: " + graph.refusal;
    return;
  }
  const BackendDescriptor& kept = parts_.emplace_back(std::move(*graph.descriptor));
  ChosenPlan chosen = choose_plan(handle, kept, std::numeric_limits<std::size_t>::max(), false);
  if (!chosen.plan) {
    unsupported_reason_ = chosen.refusal;
    return;
  }
  parts_.emplace_back(std::move(*chosen.config));
  plan_ = std::move(chosen.plan);
  plan_workspace_bytes_ = chosen.workspace_bytes;
  chosen_ = chosen.chosen;
}

std::size_t CudnnAttention::plan_bytes() const {
  return align_up(plan_workspace_bytes_);
}

std::size_t CudnnAttention::lengths_bytes() const {
  return align_up(static_cast<std::size_t>(2 * p_.batch) * sizeof(std::int32_t));
}

std::size_t CudnnAttention::row_sums_bytes() const {
  return align_up(static_cast<std::size_t>(p_.batch * p_.heads * p_.seq_q) * sizeof(float));
}

// The workspace: the plan's, the clamped lengths, then (backward) D and the dQ accumulator.
std::size_t CudnnAttention::workspace_bytes() const {
  std::size_t bytes = plan_bytes() + lengths_bytes();
  if (pass_ == Pass::kBackward)
    bytes += row_sums_bytes() +
             align_up(static_cast<std::size_t>(p_.batch * p_.heads * p_.seq_q * p_.head_dim) *
                      sizeof(float));
  return bytes;
}

std::int32_t* CudnnAttention::length_scratch(void* workspace) const {
  return reinterpret_cast<std::int32_t*>(static_cast<char*>(workspace) + plan_bytes());
}

bool CudnnAttention::takes(std::initializer_list<const Tensor*> operands) {
  for (const Tensor* t : operands)
    if (!aligned16(t->data())) return false;
  return true;
}

SampleLengths CudnnAttention::bound(SampleLengths given) const {
  const auto* full = static_cast<const std::int32_t*>(full_lengths_.data());
  return {given.q != nullptr ? given.q : full, given.kv != nullptr ? given.kv : full + p_.batch};
}

namespace {

void* writable(const void* p) {
  return const_cast<void*>(p);  // the variant pack's C API takes inputs non-const
}

void zero(const Tensor& t, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(t.data(), 0, t.bytes(), stream));
}

}  // namespace

void CudnnAttention::forward(cudnnHandle_t handle, const Tensor& q, const Tensor& k,
                             const Tensor& v, SampleLengths lengths, const Tensor& o, float* stats,
                             void* workspace) const {
  DLBENCH_CHECK(ok() && pass_ == Pass::kForward,
                "CudnnAttention::forward without a forward plan: " + unsupported_reason_);
  const auto [ql, kvl] = bound(lengths);
  const std::array<std::int64_t, 9> uids{
      kQ, kK, kV, kO, kStats, kQLengths, kKvLengths, kScale, kNegativeInfinity};
  const std::array<void*, 9> pointers{writable(q.data()),
                                      writable(k.data()),
                                      writable(v.data()),
                                      o.data(),
                                      stats,
                                      writable(ql),
                                      writable(kvl),
                                      writable(&p_.scale),
                                      writable(&negative_infinity_)};
  execute(handle, *plan_, uids, pointers, workspace);
}

void CudnnAttention::backward(cudnnHandle_t handle, const Tensor& q, const Tensor& k,
                              const Tensor& v, const Tensor& o, const Tensor& dout,
                              const float* stats, SampleLengths lengths, const Tensor& dq,
                              const Tensor& dk, const Tensor& dv, void* workspace,
                              cudaStream_t stream) const {
  DLBENCH_CHECK(ok() && pass_ == Pass::kBackward,
                "CudnnAttention::backward without a backward plan: " + unsupported_reason_);
  if (lengths.q != nullptr || lengths.kv != nullptr)
    for (const Tensor* t : {&dq, &dk, &dv}) zero(*t, stream);
  const auto [ql, kvl] = bound(lengths);
  char* base = static_cast<char*>(workspace);
  void* row_sums = base + plan_bytes() + lengths_bytes();
  void* dq_sums = static_cast<char*>(row_sums) + row_sums_bytes();
  const std::array<std::int64_t, 16> uids{kQ,      kK,        kV,         kO,     kDout,
                                          kStats,  kDq,       kDk,        kDv,    kRowSums,
                                          kDqSums, kQLengths, kKvLengths, kScale, kNegativeInfinity,
                                          kOne};
  const std::array<void*, 16> pointers{writable(q.data()),
                                       writable(k.data()),
                                       writable(v.data()),
                                       writable(o.data()),
                                       writable(dout.data()),
                                       writable(stats),
                                       dq.data(),
                                       dk.data(),
                                       dv.data(),
                                       row_sums,
                                       dq_sums,
                                       writable(ql),
                                       writable(kvl),
                                       writable(&p_.scale),
                                       writable(&negative_infinity_),
                                       writable(&one_)};
  execute(handle, *plan_, uids, pointers, workspace);
}

}  // namespace dlbench::backend::cuda
