// The CUDA backend: cuDNN for convolution, cuBLASLt for matmul, and our own kernels (.cu) for
// pooling, batch norm, activations, elementwise ops, the loss, the optimizer, casts and fills.
//
// One backend drives one GPU through one non-blocking stream; the cuDNN and cuBLASLt handles
// are bound to it, so every op is asynchronous and ops run in the order they were issued.
// synchronize() waits; to_host/from_host and all_finite wait because the host reads results.
//
// Layouts are the house ones and are never transposed: activations NHWC (cuDNN's
// CUDNN_TENSOR_NHWC), convolution weights KRSC (a CUDNN_TENSOR_NHWC filter), matmul weights
// [out, in] row-major (mapped onto cuBLASLt's column-major order in cuda_matmul.cc).
// Dtypes: f32, f16 and bf16 activations, weights and gradients, always accumulated in f32.
//
// Convolution algorithms are chosen by measurement (cuDNN's Find) the first time a shape is
// seen and cached for the life of the backend, which is the life of the process in dlbench.
// cuDNN and cuBLASLt scratch comes from one device buffer owned here that grows to the largest
// request; ops are serialized on the stream, so one buffer serves them all.
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/cuda/conv_direction.h"
#include "engine/backend/cuda/cuda_handles.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/cudnn_attention.h"
#include "engine/backend/cuda/cudnn_fused_conv.h"
#include "engine/backend/cuda/cudnn_graph_conv.h"
#include "engine/backend/cuda/cudnn_lstm.h"

namespace dlbench::backend::cuda {

// The most classes a per-row loss kernel keeps in registers (cuda_row_softmax.cuh): soft Dice's
// limit; softmax cross-entropy takes a block per row beyond it.
inline constexpr int kMaxRowClasses = 16;

// cudaMalloc on one device. Out of memory becomes Error(kResource) saying how much was asked
// for and how much the device has free, so a user can pick a smaller batch.
class CudaAllocator final : public DeviceAllocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  Device device() const override { return Device::cuda(index_); }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  std::optional<std::size_t> free_bytes() const override;  // cudaMemGetInfo

 private:
  int index_;
};

// Where convolutions that can run as a matrix product run: on whichever of cuDNN and the
// product measured faster (the default), or always on one of them (tests and the op timing
// tool pin a route). Strict-f32 convolutions also time cuDNN's graph API (cudnn_graph_conv.h)
// against that choice; kGraph pins it for every dtype where it has an engine. Convolutions over
// fewer than 8 input channels also time the same pass on inputs padded with zero channels
// (cuda_conv_padded.cu) where the copy is a small share of the memory held; kPadded pads every
// one whose copy fits the free memory (the share waived), its routes measured as by default.
// ResNet's stem forward and weight gradient (7x7/2, 3 -> 64 channels, f16 and bf16) are also
// timed on our own kernels (cuda_conv_stem.cu, cuda_conv_stem_wgrad.cu) against the route chosen
// for them; kStem runs every such pass there.
enum class ConvRoute { kMeasured, kCudnn, kGemm, kGraph, kPadded, kStem };

// How one convolution shape and direction runs: its descriptors, the algorithm the
// measurement chose (cuDNN's enum of that direction, stored as an int), and its workspace.
struct ConvPlan {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  int algorithm = 0;
  std::size_t workspace_bytes = 0;  // cuDNN's, for `algorithm`
  // Find's successful results, fastest first: a larger batch that takes this plan's choice
  // takes the first whose workspace at its size stays in Find's limit.
  struct Ranked {
    int algorithm;
    cudnnMathType_t math;
    std::size_t workspace_bytes;  // at the size Find measured
  };
  std::vector<Ranked> ranked;
  // The convolution runs as a cuBLASLt matrix product over its pixels instead
  // (cuda_conv_gemm.cu) when that measured faster than cuDNN's best (conv_choices() keeps the
  // times).
  bool gemm = false;
  // A forward with a bias, residual or ReLU runs as one cuDNN graph (cudnn_fused_conv.h) where
  // cuDNN has an engine for it and that measured faster than the route above plus its epilogue.
  std::unique_ptr<FusedConvForward> fused;
  // The plain pass runs on this graph-API engine instead, where it measured faster than the
  // route above (strict f32) or the route is pinned to it.
  std::unique_ptr<GraphConv> graph;
};
// Direction, dtype and math, then ConvParams::fields().
using ConvKey = std::array<std::int64_t, 3 + ConvParams::kFields>;

// Device pointers of one convolution call; Find runs on them (the output only when the call
// overwrites it anyway). r: a forward's residual (shaped as y), null without one.
struct ConvOperands {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
  const void* r = nullptr;
};

enum class MatmulDirection : std::int64_t { kForward, kBackwardData, kBackwardWeights };

// One matmul shape, ready to run: the descriptor, the three layouts and the algorithm that
// cuBLASLt's heuristic returned for them.
struct MatmulPlan {
  MatmulDesc desc;
  MatrixLayout a, b, c;
  cublasLtMatmulAlgo_t algorithm{};
  std::size_t workspace_bytes = 0;
};
using MatmulKey = std::array<std::int64_t, 8>;

// The CUDA backend's answer to Backend::supports, without a GPU (tests ask it directly).
Support cuda_supports(OpKind op, const OpParams& params, DType dtype);
// Why the additive attention's kernels cannot take these sizes (cuda_additive_attention.cu), or
// empty where they can.
std::string additive_attention_refusal(const AdditiveAttentionParams& p);

class CudaBackend final : public Backend {
 public:
  // Throws Error(kResource) when cuda:index does not exist.
  explicit CudaBackend(int index);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;  // "cuda:0 (NVIDIA H100 80GB HBM3, cuDNN 9.14.0)"
  Device device() const override { return Device::cuda(index_); }
  DeviceAllocator& allocator() override { return allocator_; }
  void synchronize() override;
  // CUDA events (created here) recorded on the backend's stream.
  std::unique_ptr<DeviceTimer> make_timer(std::size_t marks) override;
  bool can_capture() const override { return true; }
  void begin_capture() override;
  std::unique_ptr<DeviceGraph> end_capture() override;
  void abort_capture() noexcept override;
  // Max pooling saves where each maximum was: a uint8 per output element (cuda_pool.cu).
  std::size_t pool_workspace_bytes(const PoolParams&) const override;
  Support supports(OpKind op, const OpParams& params, DType dtype) const override;
  // Sorted (id, position) pairs, the long runs' partial sums and CUB's radix-sort scratch
  // (cuda_embedding.cu).
  std::size_t embedding_backward_workspace_bytes(std::int64_t ids, std::int64_t vocab,
                                                 std::int64_t dim) const override;
  // cuDNN's reserve space for the shape (cudnnGetRNNTempSpaceSizes).
  std::size_t lstm_reserve_bytes(const LstmParams& p, DType dtype) const override;

  cudaStream_t stream() const { return stream_; }
  // How many convolution shapes have a plan, and how many of those were measured rather than
  // taken from the slice before (tests check that a repeat or a smaller slice measures none).
  std::size_t conv_plans_cached() const { return conv_plans_.size(); }
  std::size_t conv_plans_measured() const { return conv_plans_measured_; }
  // Convolutions over more samples are measured on this many (cuda_conv.cc says why).
  static constexpr std::int64_t kConvMeasureBatch = 256;
  PlanningTime planning_time() const override;
  // The convolution plans that chose between cuDNN and a matrix product, for the timing tool
  // and the tests: direction, shape, dtype, both times and the choice.
  struct ConvChoice {
    ConvDirection direction;
    ConvParams params;
    DType dtype;
    float cudnn_ms, gemm_ms;
    bool gemm;
  };
  const std::vector<ConvChoice>& conv_choices() const { return conv_choices_; }
  // The convolutions over few input channels that chose whether to pad them (cuda_conv_padded.cu),
  // for the timing tool and the tests: the pass as it is and at each padded width the memory
  // allowed (ms), and the width it runs at (params.c: not padded).
  struct PaddingChoice {
    ConvDirection direction;
    ConvParams params;
    DType dtype;
    float unpadded_ms;
    std::vector<std::pair<std::int64_t, float>> padded_ms;
    std::int64_t channels;
  };
  const std::vector<PaddingChoice>& padding_choices() const { return padding_choices_; }
  // Passes run on padded channels so far, timing runs included (tests count the ones after).
  std::size_t padded_passes() const { return padded_passes_; }
  // The stem forwards and weight gradients timed on our own kernels (cuda_conv_stem.cu,
  // cuda_conv_stem_wgrad.cu) against the route chosen for them (ms), for the timing tool and the
  // tests; and the passes those kernels ran so far, timing runs included.
  struct StemChoice {
    ConvDirection direction;
    ConvParams params;
    DType dtype;
    float route_ms, stem_ms;
    bool stem;
  };
  const std::vector<StemChoice>& stem_choices() const { return stem_choices_; }
  std::size_t stem_passes() const { return stem_passes_; }
  // How many planned shapes run their pass on cuDNN's graph API.
  std::size_t graph_routes() const { return graph_routes_; }
  // Applies to shapes planned after the call; a pinned route records times of 0.
  void set_conv_route(ConvRoute route) { conv_route_ = route; }
  // Bytes of im2col columns built at once (tests make it small to cut a product in chunks).
  // Big enough that each chunk's product is large (ResNet-50's widest 3x3 col row is 4608
  // values, so 7,000+ rows a chunk in f32), small enough to keep the workspace modest next to
  // the activations.
  static constexpr std::size_t kColumnBytes = std::size_t{128} << 20;
  void set_column_bytes(std::size_t bytes) { column_bytes_ = std::max<std::size_t>(bytes, 1); }
  // The most bytes an activation operand of one cuDNN call may hold; a convolution over more
  // runs in slices of the batch (cuda_conv.cc says why; tests make it small to force slices).
  void set_conv_slice_bytes(std::size_t bytes) {
    conv_slice_bytes_ = std::max<std::size_t>(bytes, 1);
  }
  // The workspace, the padded operands (cuda_conv_padded.cu) and the stem kernels' partial sums.
  std::size_t workspace_bytes() const override {
    return workspace_.buffer.bytes() + padded_operands_.buffer.bytes() +
           stem_partials_.buffer.bytes();
  }
  void lend_workspace(void* memory, std::size_t bytes) override {
    lent_ = memory;
    lent_bytes_ = memory != nullptr ? bytes : 0;
  }
  void begin_workspace_watch() override { watched_ = 0, watching_ = true; }
  std::size_t end_workspace_watch() override {
    watching_ = false;
    return watched_;
  }
  void keep_workspace(std::size_t bytes) override {
    workspace_.largest = std::max(workspace_.largest, bytes);
  }
  // Each scratch buffer (the workspace, the padded operands, the stem's partial sums)
  // reallocated at its largest request where it holds more.
  void fit_workspace() override;

 protected:
#define DLBENCH_OP(ret, op, ...) ret op##_impl(__VA_ARGS__) override;
#include "engine/backend/backend_ops.def"
#undef DLBENCH_OP

 private:
  // Makes this backend's GPU current for the calling thread (a thread may drive several).
  void activate() const;
  // Scratch of at least `bytes`, valid until the next call (ops on the stream run in order):
  // the lent memory where it is large enough, else the backend's own workspace.
  void* workspace(std::size_t bytes);
  // Device scratch kept between ops: grown to hold its largest request so far, by half again at
  // least, so that slowly growing requests (the first step's shapes) reallocate rarely.
  struct GrowingBuffer {
    Buffer buffer;
    std::size_t largest = 0;  // the largest request it must keep serving (fit_workspace)
  };
  // `scratch.buffer` grown to hold at least `bytes` (its contents lost when it grows): the
  // workspace, the padded operands and the stem kernels' partial sums.
  // `keep`: count the request in scratch.largest (never inside a search).
  void* scratch(GrowingBuffer& scratch, std::size_t bytes, bool keep = true);
  // Mean device time in ms of a candidate competing for a plan: `work`'s launches over `runs`
  // runs after one unmeasured run, timed with CUDA events, its scratch requests left out of the
  // watch and the fit (searches_; cuda_conv.cc).
  float search_ms(const std::function<void()>& work, int runs = 3);

  // Blocks of `kernel` (a __global__ function) launched with `block` (and `shared` bytes of
  // dynamic shared memory) that this GPU keeps resident at once (resident_blocks_on), asked once
  // per kernel, block size and shared memory.
  int resident_blocks(const void* kernel, dim3 block, std::size_t shared = 0);
  template <class... Args>
  int resident_blocks(void (*kernel)(Args...), dim3 block, std::size_t shared = 0) {
    return resident_blocks(reinterpret_cast<const void*>(kernel), block, shared);
  }
  // The cuBLAS handle on the backend's stream, made on first use.
  cublasHandle_t cublas();
  // Throws unless t lives on this backend's GPU.
  void require_here(const Tensor& t, const char* op, const char* what) const;
  // y[r, c] = act(y[r, c] + bias[c] + residual[r, c]) in place over [rows, channels] (bias and
  // residual may be null): the epilogue of a convolution cuDNN ran, in one pass.
  void bias_activation(void* y, const void* bias, const void* residual, std::int64_t rows,
                       std::int64_t channels, Activation activation, DType dtype);
  // activation_backward with its bias gradient (dbias defined), in one pass over y and dy.
  void activation_bias_backward(Activation a, const Tensor& y, const Tensor& dy, const Tensor& dx,
                                bool accumulate, const Tensor& dbias, GradMode dbias_mode);
  // statistics [2, channels] (f32) = per channel the sum of y and of y^2 over y [rows, channels]
  // (dtype), in a fixed order: a convolution's batch-norm statistics where no fused plan wrote
  // them.
  void channel_statistics(const void* y, DType dtype, std::int64_t rows, std::int64_t channels,
                          float* statistics);
  // out[c] (+)= sum_r in[r, c] over a [rows, cols] tensor, in f32, in a fixed order.
  void column_sums(const Tensor& in, std::int64_t rows, std::int64_t cols, const Tensor& out,
                   GradMode mode, const char* op);
  // The plan of a shape, measured on first use. A later slice of a batch (index > 0) takes the
  // choice made for a slice one sample larger where there is one (batch_slices.h sizes differ
  // by at most one), and a batch past kConvMeasureBatch the choice measured at that batch,
  // instead of measuring every algorithm on the whole.
  const ConvPlan& conv_plan(ConvDirection direction, const ConvParams& p, DType dtype,
                            const ConvOperands& operands, GradMode output_mode, bool later_slice);
  // The larger slice's choice on p's descriptors; null when cuDNN cannot run its algorithm at
  // this size (then the shape is measured).
  std::unique_ptr<ConvPlan> adopt_choice(ConvDirection direction, const ConvParams& p, DType dtype,
                                         const ConvPlan& larger);
  // Calls run(slice params, slice operands, slice index) for slices of the batch that keep x
  // and y within conv_slice_bytes_ (one slice, index 0, the whole call, in the usual case).
  void for_each_batch_slice(
      const ConvParams& p, DType dtype, const ConvOperands& o,
      const std::function<void(const ConvParams&, const ConvOperands&, std::size_t)>& run);
  // Whether convolutions that may run on padded channels are measured (the default) or padded
  // wherever they can be (kPadded); their other routes are measured either way.
  bool measures_routes() const {
    return conv_route_ == ConvRoute::kMeasured || conv_route_ == ConvRoute::kPadded;
  }
  // The channels a forward or backward-weights pass over p runs its input on: p.c, or a padded
  // width where that measured faster (cuda_conv_padded.cu). `run(c)` runs the pass at width c,
  // writing only what the call may overwrite; it is called only while measuring.
  std::int64_t padded_channels(ConvDirection direction, const ConvParams& p, DType dtype,
                               const std::function<void(std::int64_t)>& run);
  // Keeps the padded operands to what the shapes that run padded need: timing the wider widths
  // grew them, and a pass that runs on the stem kernels needs none.
  void fit_padded_operands();
  // Whether the forward or backward-weights pass over p (operands o) runs on the stem kernels:
  // where they can and `stem` (the pass on them) measured faster than `route` (the pass on the
  // route chosen for it), or kStem pins them. Both may write only what the call overwrites.
  bool stem_route(ConvDirection direction, const ConvParams& p, DType dtype, const ConvOperands& o,
                  const std::function<void()>& route, const std::function<void()>& stem);
  // The forward on the stem kernel, with its bias and ReLU and, with p.statistics, the sums.
  void stem_forward(const ConvParams& p, DType dtype, const ConvOperands& o, const void* bias,
                    float* statistics);
  // dw (o.w) of the stem from x and dy (o.y) on the stem's weight-gradient kernel.
  void stem_backward_weights(const ConvParams& p, DType dtype, const ConvOperands& o,
                             GradMode mode);
  // The forward's batch slices on their plans, then the statistics where no fused plan wrote
  // them (cuda_conv_run.cc); the same at `channels` input channels, the padding written first
  // (cuda_conv_padded.cu).
  void forward_slices(const ConvParams& p, DType dtype, const ConvOperands& o, const void* bias,
                      float* statistics);
  void forward_on_channels(std::int64_t channels, const ConvParams& p, DType dtype,
                           const ConvOperands& o, const void* bias, float* statistics);
  // dw (o.w) over the batch slices, each later slice adding its share; and the same at
  // `channels` input channels, dw's padding dropped afterwards.
  void backward_weights_slices(const ConvParams& p, DType dtype, const ConvOperands& o,
                               GradMode mode);
  void backward_weights_on_channels(std::int64_t channels, const ConvParams& p, DType dtype,
                                    const ConvOperands& o, GradMode mode);
  // A planned forward with its bias, residual (o.r) and activation, on whichever route the plan
  // chose. With p.statistics, `statistics` ([2, K] f32) is where a fused plan writes them;
  // returns whether it did (else the caller computes them from y).
  bool run_forward(const ConvPlan& plan, const ConvParams& p, DType dtype, const ConvOperands& o,
                   const void* bias, float* statistics);
  // The most scratch a fused graph-API forward may ask for: what the backend's workspace
  // already holds or the unfused route it replaces needs (`route_bytes`), so fusing never grows
  // the workspace beyond what the unfused route would.
  std::size_t fused_workspace_limit(std::size_t route_bytes) const;
  // Measures the fused graph-API forward against the plan's route + epilogue (+ the statistics
  // pass); keeps the faster.
  void choose_fused_forward(ConvPlan& plan, const ConvParams& p, DType dtype,
                            const ConvOperands& o);
  // Times the graph route's engines against the plan's route (strict f32, or pinned) and keeps
  // them where they won; `workspace` holds `limit` bytes.
  void choose_graph_route(ConvDirection direction, ConvPlan& plan, const ConvParams& p, DType dtype,
                          const ConvOperands& o, void* workspace, std::size_t limit);
  // The plain pass (no epilogue) on the plan's route: out = pass + beta * out.
  void run_plain(ConvDirection direction, const ConvPlan& plan, const ConvParams& p, DType dtype,
                 const ConvOperands& o, float beta);
  // Runs a planned convolution on cuDNN: out = conv + beta * out (forward: beta 0).
  void run_cudnn_conv(ConvDirection direction, const ConvPlan& plan, const ConvOperands& o,
                      void* workspace, float beta);
  // Convolutions as matrix products (cuda_conv_gemm.cu): whether a shape and direction can
  // (any whose tensors the kernels' int geometry reaches, except f16/bf16 backward-weights
  // that needs more than one chunk of columns), and the product itself,
  // out = product + beta * out, forward with an optional bias and residual (o.r; beta 0).
  bool gemm_can_run(ConvDirection direction, const ConvParams& p, DType dtype) const;
  void conv_gemm(ConvDirection direction, const ConvParams& p, DType dtype, const ConvOperands& o,
                 const void* bias, float beta);
  void conv_gemm_backward_data(const ConvParams& p, DType dtype, const ConvOperands& o, float beta);
  // cuDNN's attention plan of a shape and pass, built on first use (null and `why` set where
  // cuDNN cannot run it; a refusal is remembered too, so it is asked once).
  const CudnnAttention* cudnn_attention(const AttentionParams& p, DType dtype,
                                        CudnnAttention::Pass pass, std::string* why);
  // Which fused implementation takes an attention call (cuda_attention.cu): cuDNN's plan, our
  // flash kernels, or neither (the unfused path). A kernel p.kernel names that cannot take it
  // throws Error(kUsage) saying why.
  struct AttentionRoute {
    const CudnnAttention* cudnn = nullptr;
    bool flash = false;
  };
  AttentionRoute attention_route(const AttentionParams& p, DType dtype, CudnnAttention::Pass pass,
                                 std::initializer_list<const Tensor*> operands, GradMode mode);
  // cuDNN's descriptors of an LSTM shape, made on first use (cuda_lstm.cc).
  const CudnnLstm& lstm_plan(const LstmParams& p, DType dtype) const;
  // `aux`: the forward's GELU epilogue keeps GELU's input.
  MatmulPlan& matmul_plan(MatmulDirection direction, const MatmulParams& p, DType dtype,
                          bool aux = false);
  MatmulPlan& matmul_plan(const MatmulKey& key);
  // d = a·b + beta c through a plan (c = d unless given); `ws` holds at least
  // plan.workspace_bytes; `aux` is the epilogue's auxiliary input (DGELU's pre-activation).
  void run_matmul(MatmulPlan& plan, const void* a, const void* b, void* d, float beta,
                  const void* bias, void* ws, const void* c = nullptr, const void* aux = nullptr);

  int index_;
  CudaAllocator allocator_;
  Stream stream_;
  CudnnHandle cudnn_;
  CublasLtHandle cublaslt_;
  // cuBLAS proper for the pointer-array batched products of unfused attention (cuBLASLt batches
  // only at one stride, and a head's rows within a sample are not one stride from the next
  // sample's), with a workspace of its own so that, once made, it allocates nothing inside a
  // graph recording. Made on first use (cublas(): a model's first step, which runs eagerly), so
  // models without attention hold neither.
  std::optional<CublasHandle> cublas_;
  Buffer cublas_workspace_;
  GrowingBuffer workspace_;
  void* lent_ = nullptr;  // lend_workspace's memory, used before workspace_ where it is enough
  std::size_t lent_bytes_ = 0;
  bool watching_ = false;  // begin_workspace_watch's requests are counted in watched_
  std::size_t watched_ = 0;
  // Above 0 while a plan's candidates are timed (search_ms): their requests are the search's, so
  // no watch and no fit counts them; the candidate chosen asks again when it runs.
  int searches_ = 0;
  // Reallocations of workspace_, padded_operands_ and stem_partials_ (DeviceGraph::current).
  std::uint64_t workspace_generation_ = 0;
  std::uint64_t capture_generation_ = 0;  // workspace_generation_ when the capture began
  std::map<ConvKey, std::unique_ptr<ConvPlan>> conv_plans_;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> matmul_plans_;
  // Kernel, block size and dynamic shared memory.
  std::map<std::tuple<const void*, unsigned, std::size_t>, int> resident_blocks_;
  // What a cuDNN attention plan depends on (math aside: it runs f16 and bf16 only).
  struct AttentionKey {
    std::int64_t batch, heads, seq_q, seq_kv, head_dim;
    float scale;
    bool causal;
    DType dtype;
    CudnnAttention::Pass pass;
    auto operator<=>(const AttentionKey&) const = default;
  };
  std::map<AttentionKey, std::unique_ptr<CudnnAttention>> attention_plans_;
  // Batch, steps, input, hidden, math and dtype. Mutable: lstm_reserve_bytes, a const query,
  // makes the plan it reads.
  using LstmKey = std::array<std::int64_t, 6>;
  mutable std::map<LstmKey, std::unique_ptr<CudnnLstm>> lstm_plans_;
  std::vector<ConvChoice> conv_choices_;
  std::map<ConvKey, std::int64_t> padded_channels_;  // the width each measured shape runs at
  std::vector<PaddingChoice> padding_choices_;
  // The padded input (and weights, or their gradient) of a pass on padded channels; after each
  // choice, no larger than the widths chosen need.
  GrowingBuffer padded_operands_;
  std::size_t padded_passes_ = 0;
  std::map<ConvKey, bool> stem_routes_;  // whether each measured stem pass runs our kernel
  std::vector<StemChoice> stem_choices_;
  GrowingBuffer stem_partials_;  // the stem kernels' per-block sums
  std::size_t stem_passes_ = 0;
  std::size_t conv_plans_measured_ = 0;
  // Wall time of the measurements behind conv_plans_ (planning_time's parts).
  double find_seconds_ = 0, product_timing_seconds_ = 0, fused_graph_seconds_ = 0,
         graph_route_seconds_ = 0, padding_seconds_ = 0, stem_seconds_ = 0;
  std::size_t graph_routes_ = 0;  // plans whose pass runs on the graph route
  ConvRoute conv_route_ = ConvRoute::kMeasured;
  std::size_t column_bytes_ = kColumnBytes;
  std::size_t conv_slice_bytes_ = (std::size_t{1} << 31) - 1;
  std::string device_name_;
};

// Throws Error(kUsage) unless t is f32, f16 or bf16.
void require_float(const Tensor& t, const char* op, const char* what);
// Blocks of `kernel` (a __global__ function's address) of `threads` threads that all of
// `device`'s multiprocessors keep resident at once, from CUDA's occupancy calculator, which
// answers for the current device: callers make `device` current first.
int resident_blocks_on(int device, const void* kernel, int threads, std::size_t shared = 0);
// Bytes of the padded operands of a convolution over p at `channels` input channels: x, then w
// or its gradient (cuda_conv_padded.cu).
std::size_t padded_operand_bytes(const ConvParams& p, DType dtype, std::int64_t channels);
// Whether the stem kernels (cuda_conv_stem.cu, cuda_conv_stem_wgrad.cu) run a forward or
// backward-weights pass over p: ResNet's stem (7x7, stride 2, padding 3, 3 -> 64 channels) in
// f16 or bf16, with or without a bias, a ReLU and statistics, and no residual.
bool stem_kernel_fits(const ConvParams& p, DType dtype);
// The key a convolution's plan and route choices are kept under: direction, dtype and math,
// then ConvParams::fields() (cuda_conv.cc).
ConvKey conv_key(ConvDirection direction, const ConvParams& p, DType dtype);
// Throws Error(kUsage) unless a and b have the same dtype.
void require_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* what);

}  // namespace dlbench::backend::cuda
