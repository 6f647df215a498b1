// The op interface every backend implements (CPU: oneDNN and loops; CUDA: cuDNN, cuBLASLt
// and our kernels). Public entry points check shapes and dtypes at the door; each backend
// implements the *_impl hooks. Ops run in order on the backend's stream; synchronize() waits.
//
// Conventions: tensors are dense row-major views; outputs are written (or accumulated when a
// GradMode says so); workspaces come from the caller, sized by the *_workspace_bytes queries.
//
// Dtypes: activations, weights and their gradients share one float dtype per op (f32 on CPU;
// f32, f16 or bf16 on CUDA, accumulating in f32). Batch-norm parameters and statistics, the
// loss and every optimizer buffer are always f32 (fp32 master weights); labels are i32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/device_graph.h"
#include "engine/backend/device_timer.h"
#include "engine/backend/op_params.h"
#include "engine/backend/op_support.h"
#include "engine/backend/planning_time.h"
#include "engine/core/memory.h"
#include "engine/core/tensor.h"

namespace dlbench::backend {

// The residual's own batch norm where BatchNormParams::residual_norm: y = relu(bn(x) + bn'(r)).
// Forward training reads gamma and beta (and, with p.statistics, the sums of r and r^2 in
// `statistics`, f32 [2, channels]), writes saved_mean and saved_inv_std and updates the running
// statistics; backward reads gamma and the saved statistics and writes dgamma and dbeta. All
// f32 [channels]; the members an op does not use may stay undefined.
struct ResidualNorm {
  Tensor gamma, beta, saved_mean, saved_inv_std, running_mean, running_var, statistics;
  Tensor dgamma, dbeta;
};

// What beam search carries per hypothesis from position to position (Backend::beam_pick), each
// read and rewritten in place: its score f32 [rows], whether it has closed i32 [rows], its
// length in tokens i32 [rows] ([EOS] included) and its attention summed over positions f32
// [rows, sources] (the coverage penalty's).
struct BeamState {
  Tensor scores, finished, lengths, coverage;
};

// The gradients Backend::additive_attention_backward writes, each only where defined: of the
// queries, keys and values in their own modes (a value feeding the keys' projection too gets
// both gradients added), and of v and g (one mode, as a layer's parameters; dg f32 as g).
struct AdditiveAttentionGrads {
  Tensor dq, dk, dvalues, dv, dg;
  GradMode q_mode = GradMode::kOverwrite, k_mode = GradMode::kOverwrite,
           values_mode = GradMode::kOverwrite, param_mode = GradMode::kOverwrite;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // "cpu (oneDNN 2.6.3)"
  virtual Device device() const = 0;
  virtual DeviceAllocator& allocator() = 0;
  virtual void synchronize() = 0;
  // A timer of `marks` numbered marks on this backend's stream (device_timer.h); its
  // resources are created here, so recording a mark allocates nothing.
  virtual std::unique_ptr<DeviceTimer> make_timer(std::size_t marks) = 0;
  // Recording work into a DeviceGraph (device_graph.h). A backend that cannot record says so
  // here and never sees begin_capture. end_capture throws Error(kExternal) when the recording
  // failed; abort_capture ends a recording that an op's error interrupted.
  virtual bool can_capture() const { return false; }
  virtual void begin_capture() {}
  virtual std::unique_ptr<DeviceGraph> end_capture() { return nullptr; }
  virtual void abort_capture() noexcept {}
  // What measuring took since the backend was made (run output's start-up row).
  virtual PlanningTime planning_time() const { return {}; }
  // Device scratch the backend keeps between ops (CUDA: the one workspace that convolution
  // algorithms, fused plans and im2col columns share, grown to the largest request and fitted
  // to what it must keep serving after the first step, and the padded copies of few-channel
  // convolution inputs).
  virtual std::size_t workspace_bytes() const { return 0; }
  // Lends the backend `bytes` of device memory at `memory` (nullptr, 0: none) for its ops'
  // workspace until the next call: an op that needs no more than that uses it instead of the
  // backend's own buffer. The executor lends each node the activation memory that no value
  // occupies while the node runs, so a workspace there adds nothing to the step's peak.
  virtual void lend_workspace(void* memory, std::size_t bytes) {
    (void)memory;
    (void)bytes;
  }
  // Watches the workspace requests of the ops issued until end_workspace_watch, which returns
  // the largest (0 where the backend keeps no workspace; candidates timed for a plan are not
  // counted). The backend's own workspace does not count them as its to keep (fit_workspace):
  // the watcher lends them memory, or hands them back with keep_workspace.
  virtual void begin_workspace_watch() {}
  virtual std::size_t end_workspace_watch() { return 0; }
  virtual void keep_workspace(std::size_t bytes) { (void)bytes; }
  // Gives back what the own workspace holds past the largest request it must keep serving (it
  // grows by half again past a request, and watched requests may be lent elsewhere since). The
  // trainer calls it after its first step, and a recording (begin_capture) first, as it holds
  // the addresses.
  virtual void fit_workspace() {}

  // Whether `op` with these parameters runs here on tensors of `dtype` (the op's main float
  // dtype; the dtype filled for fills). Asked by graph passes and tests before they call an op.
  virtual Support supports(OpKind op, const OpParams& params, DType dtype) const = 0;

  // --- convolution (NHWC x, KRSC w, optional bias [k]) -----------------------------------
  // y = act(conv(x, w) + bias + residual), the bias, residual (shaped as y; p.residual) and
  // activation each where p asks for them; with p.statistics also the sums of y and y^2 per
  // channel into statistics (f32 [2, K]).
  void conv_forward(const ConvParams& p, const Tensor& x, const Tensor& w, const Tensor& bias,
                    const Tensor& y, const Tensor& residual = {}, const Tensor& statistics = {});
  void conv_backward_data(const ConvParams& p, const Tensor& dy, const Tensor& w, const Tensor& dx,
                          GradMode mode);
  // dw always; dbias when p.bias.
  void conv_backward_weights(const ConvParams& p, const Tensor& x, const Tensor& dy,
                             const Tensor& dw, const Tensor& dbias, GradMode mode);

  // --- batch norm (x as [rows, channels]; per-channel gamma, beta, stats) -------------------
  // Normalizes with batch statistics, saves mean and 1/sqrt(var + eps) for backward, and
  // updates the running mean and (unbiased) running variance. With a tail (p.residual,
  // p.activation) it adds `residual` (shaped as x) and applies the ReLU, writing its bit mask
  // to `relu_mask` (i32, p.mask_words()). With p.statistics the batch statistics come from
  // `statistics` (f32 [2, channels]: sums of x and x^2) instead of a pass over x. With
  // p.residual_norm the residual is normalized by its own batch norm (`residual_norm`) first.
  void batch_norm_forward_training(const BatchNormParams& p, const Tensor& x, const Tensor& gamma,
                                   const Tensor& beta, const Tensor& y, const Tensor& saved_mean,
                                   const Tensor& saved_inv_std, const Tensor& running_mean,
                                   const Tensor& running_var, const Tensor& residual = {},
                                   const Tensor& relu_mask = {}, const Tensor& statistics = {},
                                   const ResidualNorm& residual_norm = {});
  void batch_norm_forward_inference(const BatchNormParams& p, const Tensor& x, const Tensor& gamma,
                                    const Tensor& beta, const Tensor& running_mean,
                                    const Tensor& running_var, const Tensor& y,
                                    const Tensor& residual = {});
  // dx (mode), dgamma and dbeta (overwritten). dy is the gradient of the op's output: with a
  // ReLU tail, `relu_mask` (from forward) turns it into the pre-activation's gradient on the
  // fly; with a residual, that gradient also goes to `dresidual` (residual_mode) unless it is
  // left undefined (a residual that needs no gradient). With p.residual_norm that gradient
  // goes back through the residual's batch norm: dresidual is the gradient of `residual` (its
  // input, as forward took it), and residual_norm's dgamma and dbeta are written either way.
  void batch_norm_backward(const BatchNormParams& p, const Tensor& x, const Tensor& dy,
                           const Tensor& gamma, const Tensor& saved_mean,
                           const Tensor& saved_inv_std, const Tensor& dx, const Tensor& dgamma,
                           const Tensor& dbeta, GradMode mode, const Tensor& relu_mask = {},
                           const Tensor& dresidual = {},
                           GradMode residual_mode = GradMode::kOverwrite,
                           const Tensor& residual = {}, const ResidualNorm& residual_norm = {});

  // Batch norm folded into the operator before it, for inference: with s = gamma /
  // sqrt(running_var + eps) per output channel k (w's first dimension),
  //   folded_w[k, ...] = w[k, ...] s[k];   folded_bias[k] = beta[k] + (bias[k] - mean[k]) s[k]
  // so that bn(conv(x, w) + bias) = conv(x, folded_w) + folded_bias. bias is optional (zero
  // when undefined); w, bias and the folded tensors share one float dtype, computed in f32.
  void batch_norm_fold(const BatchNormParams& p, const Tensor& w, const Tensor& bias,
                       const Tensor& gamma, const Tensor& beta, const Tensor& running_mean,
                       const Tensor& running_var, const Tensor& folded_w,
                       const Tensor& folded_bias);

  // --- pooling ---------------------------------------------------------------------------
  virtual std::size_t pool_workspace_bytes(const PoolParams& p) const = 0;
  void pool_forward(const PoolParams& p, const Tensor& x, const Tensor& y, const Tensor& workspace);
  void pool_backward(const PoolParams& p, const Tensor& x, const Tensor& y, const Tensor& dy,
                     const Tensor& workspace, const Tensor& dx, GradMode mode);

  // --- matmul / inner product ------------------------------------------------------------
  // With p.gelu, y = GELU(x · Wᵀ + b), and `pre` ([m, n], where given) gets x · Wᵀ + b for the
  // backward (matmul_backward_data's gelu_input).
  void matmul_forward(const MatmulParams& p, const Tensor& x, const Tensor& w, const Tensor& bias,
                      const Tensor& y, const Tensor& pre = {});
  // dx = dy · W (mode). p.activation must be kNone: the graph runs the activation's backward
  // first. With p.gelu_gradient, dx = (dy · W) * GELU'(gelu_input) ([m, k], what went into the
  // GELU whose output the forward multiplied), overwriting only: the feed-forward's dGELU
  // folded into the product.
  void matmul_backward_data(const MatmulParams& p, const Tensor& dy, const Tensor& w,
                            const Tensor& dx, GradMode mode, const Tensor& gelu_input = {});
  // dw = dyᵀ · x, dbias = column sums of dy (when p.bias).
  void matmul_backward_weights(const MatmulParams& p, const Tensor& x, const Tensor& dy,
                               const Tensor& dw, const Tensor& dbias, GradMode mode);

  // --- embeddings and columns ------------------------------------------------------------
  // y[i, :] = table[ids[i], :] for table [V, D], i32 ids [N], y [N, D]. Ids must lie in
  // [0, V): the CPU backend throws Error(kUsage) before writing anything; the CUDA backend
  // cannot read ids at the door and writes NaN rows for them instead.
  void embedding_forward(const Tensor& table, const Tensor& ids, const Tensor& y);
  // dtable[ids[i], :] += dy[i, :] for i in order, accumulated in f32 and rounded once per row,
  // in the same order on every backend and run (no float atomics): the bits do not depend on
  // scheduling. kOverwrite zero-fills the whole dtable and touched first; kAccumulate adds to
  // both. touched (i32 [V]) is set to 1 for every row written, for sparse optimizers.
  // Out-of-range ids: the CPU backend throws before writing; the CUDA backend skips them.
  // The workspace holds at least embedding_backward_workspace_bytes(N, V, D) bytes.
  virtual std::size_t embedding_backward_workspace_bytes(std::int64_t ids, std::int64_t vocab,
                                                         std::int64_t dim) const = 0;
  void embedding_backward(const Tensor& dy, const Tensor& ids, const Tensor& workspace,
                          const Tensor& dtable, const Tensor& touched, GradMode mode);
  // A training batch for implicit feedback (NCF) of B = users.dim(0) samples from P =
  // users_pos.dim(0) positives (i32 [P] each), P <= B: row r < P is positive r with label 1;
  // row P + j pairs user users_pos[j % P] with an item drawn uniformly from [0, p.items), label
  // 0. Like the published NCF training, a drawn item may be one the user rated. users, items: i32
  // [B]; labels [B, 1] in a float dtype. The draw is a pure function of (p.seed, step, j),
  // negative_item() in sampled_negatives.h, so every backend writes the same ids; step (i32
  // [1], on the device, as Adam's) is incremented first, so each call, and each replay of a
  // recorded device graph, draws anew.
  void sample_negatives(const NegativeSamplingParams& p, const Tensor& step,
                        const Tensor& users_pos, const Tensor& items_pos, const Tensor& users,
                        const Tensor& items, const Tensor& labels);
  // Word2Vec's candidates for P (word, context) pairs: ids [P, m] i32 and labels [P, m] (a float
  // dtype), column 0 the pair's context (contexts: i32 [P]) with label 1, columns 1..m-1 drawn
  // from the distribution whose cumulative table is cdf (f32 [V], nondecreasing, ending at 1:
  // the unigram^0.75 of the vocabulary) with label 0. Draw j = p (m - 1) + column - 1 is
  // table_draw(cdf, V, unit_uniform(key, j)) (sampled_negatives.h), key from (p.seed, step); step
  // (i32 [1], on the device) is incremented first, as sample_negatives does.
  void sample_candidates(const CandidateSamplingParams& p, const Tensor& step,
                         const Tensor& contexts, const Tensor& cdf, const Tensor& ids,
                         const Tensor& labels);
  // Each row of a [n, d] against its own m candidate rows of c [n * m, d] (Word2Vec's scores of
  // a word against its context and its negatives): y[i, j] = sum_k a[i, k] c[i m + j, k], y
  // [n, m], summed in f32 and rounded once. One dtype for all three.
  void row_dots_forward(const Tensor& a, const Tensor& c, const Tensor& y);
  // Its gradients: da[i, :] (+)= sum_j dy[i, j] c[i m + j, :] (j in order, in f32), and
  // dc[i m + j, :] (+)= dy[i, j] a[i, :]; an undefined da or dc is not computed.
  void row_dots_backward(const Tensor& a, const Tensor& c, const Tensor& dy, const Tensor& da,
                         GradMode da_mode, const Tensor& dc, GradMode dc_mode);
  // dst[:, dst_col + j] (+)= src[:, src_col + j] for j in [0, cols): src [m, a], dst [m, b] of
  // one dtype. Splitting columns (a forward), concatenating them (a split's backward, with
  // kAccumulate where branches share a column range) and concatenation itself. Exact when
  // overwriting.
  void copy_columns(const Tensor& src, std::int64_t src_col, const Tensor& dst,
                    std::int64_t dst_col, std::int64_t cols, GradMode mode);

  // --- additive attention (GNMT's normalized Bahdanau attention) ----------------------------
  // Each query's scores against its sample's keys, over the first lengths[b] (i32 [batch]):
  //   e[b, t, s] = g (v / |v|) . tanh(q[t, b] + k[s, b]),   probs[b, t, :] = softmax_s(e),
  //   o[t, b] = sum_s probs[b, t, s] values[s, b],
  // with probs 0 past the length (and everywhere, so o = 0, for a sample of length 0). q, k,
  // values, v [width] and o share one float dtype; g [1] is f32 in every precision (a scale,
  // kept as batch norm's are); probs (f32 [batch, queries, keys]) is kept for backward and for
  // beam search's coverage penalty. Computed in f32 (CPU: double), with no [batch, queries,
  // keys, width] tensor in memory.
  void additive_attention_forward(const AdditiveAttentionParams& p, const Tensor& q,
                                  const Tensor& k, const Tensor& values, const Tensor& v,
                                  const Tensor& g, const Tensor& lengths, const Tensor& o,
                                  const Tensor& probs);
  // The gradients from dout (o's) and the forward's probs (grads says which, and in which modes).
  void additive_attention_backward(const AdditiveAttentionParams& p, const Tensor& q,
                                   const Tensor& k, const Tensor& values, const Tensor& v,
                                   const Tensor& g, const Tensor& lengths, const Tensor& probs,
                                   const Tensor& dout, const AdditiveAttentionGrads& grads);

  // --- activations and elementwise -------------------------------------------------------
  void activation_forward(Activation a, const Tensor& x, const Tensor& y);
  // ReLU's backward needs only y (y > 0 where x > 0), so x need not be kept. dx may be dy
  // (in place). With dbias ([C] for y [..., C], y's dtype) also dbias (+)= the sum over rows of
  // the gradient that dx receives, in the same pass: the bias gradient of the op whose ReLU
  // epilogue this undoes, without the weights' backward reading dy once more.
  void activation_backward(Activation a, const Tensor& y, const Tensor& dy, const Tensor& dx,
                           GradMode mode, const Tensor& dbias = {},
                           GradMode dbias_mode = GradMode::kOverwrite);
  void add(const Tensor& a, const Tensor& b, const Tensor& y);  // y = a + b
  void accumulate(const Tensor& src, const Tensor& dst);        // dst += src
  // y = a * b elementwise (mode: y += a * b), in f32 and rounded once.
  void multiply(const Tensor& a, const Tensor& b, const Tensor& y, GradMode mode);
  // GELU in its tanh form, as Google's BERT and cuBLASLt's GELU epilogues compute it:
  // y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2. Backward reads x (ReLU's trick of
  // reading y does not work: GELU is not monotonic): dx (+)= dy GELU'(x).
  void gelu_forward(const Tensor& x, const Tensor& y);
  void gelu_backward(const Tensor& x, const Tensor& dy, const Tensor& dx, GradMode mode);
  // y = tanh(x) (BERT's pooler); backward reads y, as ReLU's does: dx (+)= dy (1 - y^2).
  void tanh_forward(const Tensor& x, const Tensor& y);
  void tanh_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, GradMode mode);
  // Dropout as BERT trains with it: y = x / (1 - p.probability) where element i is kept, else
  // 0. Whether element i is kept is a pure function of (p.seed, the step counter, i),
  // dropout_keeps() in dropout_mask.h, so every backend draws the same mask. forward first adds
  // 1 to `step` (i32 [1] on the device, as sample_negatives does), so each call and each replay
  // of a recorded device graph draws anew; backward reads the counter without advancing it and
  // regenerates the forward's mask rather than reading a stored one: dx (+)= dy / (1 - p) where
  // kept. So each dropout site needs a counter of its own (backward reads the last value the
  // counter took) and a seed of its own (two sites at one seed and count draw the same mask).
  void dropout_forward(const DropoutParams& p, const Tensor& step, const Tensor& x,
                       const Tensor& y);
  void dropout_backward(const DropoutParams& p, const Tensor& step, const Tensor& dy,
                        const Tensor& dx, GradMode mode);
  // The Transformer's embedding tail (positional_encoding.h has the encoding's formula):
  //   y (mode)= p.scale x + (p.encode ? PE(r % p.sequence, c) : 0)   for row r, column c
  // x and y [rows, width] of one float dtype, rows whole sequences (a multiple of p.sequence),
  // width even: sines of the position in the first half of the columns, cosines in the second.
  // The encoding is a constant, so its backward is this op with encode false: dx (mode)=
  // scale dy. y may be x (elementwise).
  void positional_encoding(const PositionalEncodingParams& p, const Tensor& x, const Tensor& y,
                           GradMode mode);

  // --- layer norm ------------------------------------------------------------------------
  // Over each row of x [p.rows, p.width]: mean m and biased variance v of the row,
  // y = (x - m) / sqrt(v + eps) * gamma + beta; saved_mean = m and saved_inv_std =
  // 1 / sqrt(v + eps) per row (f32 [rows]) for backward. gamma, beta f32 [width] (fp32 master
  // parameters, as batch norm's); x and y in the compute dtype, statistics in f32.
  void layer_norm_forward(const LayerNormParams& p, const Tensor& x, const Tensor& gamma,
                          const Tensor& beta, const Tensor& y, const Tensor& saved_mean,
                          const Tensor& saved_inv_std);
  // With xhat = (x - m) s and g = dy * gamma per row: dx (mode) = s (g - mean(g) - xhat
  // mean(g xhat)); dgamma = sum over rows of dy xhat, dbeta = sum over rows of dy (f32 [width],
  // overwritten).
  void layer_norm_backward(const LayerNormParams& p, const Tensor& x, const Tensor& dy,
                           const Tensor& gamma, const Tensor& saved_mean,
                           const Tensor& saved_inv_std, const Tensor& dx, GradMode mode,
                           const Tensor& dgamma, const Tensor& dbeta);

  // --- attention -------------------------------------------------------------------------
  // Scaled dot-product attention of p.heads heads at once, the core of multi-head attention
  // (BERT, the Transformer). q and o are [batch * seq_q, heads * head_dim], k and v [batch *
  // seq_kv, heads * head_dim]: a row per (sample, position), head h in columns [h d, (h + 1) d),
  // as the projections write them. For sample n, head h and query i, key j is visible when
  // j < kv_lengths[n] (and j <= i with p.causal); over the visible keys
  //   s_j = p.scale (q_i . k_j),   o_i = sum_j softmax(s)_j v_j,   stats = log sum_j exp(s_j)
  // with stats f32 [batch, heads, seq_q] kept for backward. A query at i >= q_lengths[n], or one
  // that sees no key, gets o_i = 0 and stats 0. Lengths are i32 [batch] on the device;
  // undefined means every position. The CPU throws Error(kUsage) for a length outside [0, seq]
  // before writing anything; CUDA cannot read them at the door and clamps them. Scores and sums
  // are in f32; in f16 and bf16 the probabilities are rounded to the dtype before they weigh v,
  // as fused attention kernels do. Rows of k and v past the lengths must be finite: CUDA's
  // unfused path multiplies them by a probability of 0.
  void attention_forward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                         const Tensor& v, const Tensor& q_lengths, const Tensor& kv_lengths,
                         const Tensor& o, const Tensor& stats);
  // dq, dk and dv (mode) from dout, the softmax recomputed from q, k and stats (the seq_q x
  // seq_kv probabilities are never kept from forward): with P the probabilities, dP = dout v^T
  // and D_i = sum_j P_ij dP_ij (= dout_i . o_i),
  //   dv = P^T dout,   dq = p.scale dS k,   dk = p.scale dS^T q,   dS = P (dP - D).
  // Positions past the lengths get zero gradients.
  void attention_backward(const AttentionParams& p, const Tensor& q, const Tensor& k,
                          const Tensor& v, const Tensor& o, const Tensor& dout, const Tensor& stats,
                          const Tensor& q_lengths, const Tensor& kv_lengths, const Tensor& dq,
                          const Tensor& dk, const Tensor& dv, GradMode mode);

  // --- recurrent layers ------------------------------------------------------------------
  // One LSTM layer over p.steps steps (LstmParams has the cell and the weights' layout): x
  // [steps * batch, input] and y [steps * batch, hidden] time-major, w [p.weights()], all of one
  // float dtype, as are the states [batch, hidden]. h0 and c0 start the recurrence (zeros where
  // undefined); hn and cn, where defined, get the last step's states. Training passes a
  // reserve of at least lstm_reserve_bytes(p, dtype) bytes (any dtype), which keeps what
  // backward needs; inference leaves it undefined. Products in the dtype (TF32 where p.math
  // says), gates and cell states in f32 within a step; y and the states are rounded to the
  // dtype, and the next step reads h as rounded.
  virtual std::size_t lstm_reserve_bytes(const LstmParams& p, DType dtype) const = 0;
  // The largest of lstm_reserve_bytes over the float dtypes this backend can plan p in: a reserve
  // sized before the precision is known (a layer's state, a test's tensors). A dtype it cannot
  // plan (bf16 before cuDNN 9.13) is left out; a call in it then fails with the library's reason.
  std::size_t largest_lstm_reserve_bytes(const LstmParams& p) const;
  void lstm_forward(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& h0,
                    const Tensor& c0, const Tensor& y, const Tensor& hn, const Tensor& cn,
                    const Tensor& reserve);
  // Backpropagation through the steps of the forward that filled `reserve` (with the same x, w,
  // h0, c0 and y), from dy and the final states' gradients dhn and dcn (zeros where undefined):
  // dx (mode), dh0 and dc0 (overwritten; not computed where undefined) and dw (dw_mode; not
  // computed where undefined). The reserve is spent: a second backward needs a new forward.
  void lstm_backward(const LstmParams& p, const Tensor& x, const Tensor& w, const Tensor& h0,
                     const Tensor& c0, const Tensor& y, const Tensor& dy, const Tensor& dhn,
                     const Tensor& dcn, const Tensor& reserve, const Tensor& dx, GradMode mode,
                     const Tensor& dh0, const Tensor& dc0, const Tensor& dw, GradMode dw_mode);

  // Each sample's sequence reversed within its own length (the bidirectional LSTM's backward
  // direction runs left to right over it): for sample b of length L = lengths[b],
  //   y[t * batch + b, :] (mode)= x[(L - 1 - t) * batch + b, :] for t < L, x[t * batch + b, :]
  // for the padding after it. x and y [steps * batch, width] of one float dtype, not the same
  // memory; lengths i32 [batch] on the device. The op is its own inverse, and so its own
  // backward. The CPU throws Error(kUsage) for a length outside [0, steps] before writing; CUDA
  // cannot read them at the door and clamps them.
  void reverse_sequences(const SequenceParams& p, const Tensor& lengths, const Tensor& x,
                         const Tensor& y, GradMode mode);

  // --- decoding --------------------------------------------------------------------------
  // One position of greedy decoding. For each sentence n of p.batch not yet finished
  // (finished[n] == 0): tokens[n] = the id of the highest of logits [batch, vocabulary] row n
  // (the lowest id among equal highest; NaN never chosen; 0 when no score is above -inf),
  // lengths[n] += 1, and finished[n] = 1 where that id is p.eos. A finished sentence gets p.pad
  // and keeps its length. Then unfinished [1] = how many sentences are still unfinished, which
  // the decoder reads to stop. tokens, finished, lengths and unfinished are i32 on the device;
  // logits of a float dtype.
  void greedy_pick(const GreedyParams& p, const Tensor& logits, const Tensor& tokens,
                   const Tensor& finished, const Tensor& lengths, const Tensor& unfinished);
  // One position of beam search over p.batch sentences of p.beam hypotheses (rows n * beam + k).
  // Sentence n's candidates: for each of its unfinished hypotheses k and each id j,
  //   score_k + log_softmax(logits row k)_j, continuing k with token j;
  // for each finished k one candidate, score_k, continuing k with p.pad. Its p.beam best
  // candidates (the higher score; on ties the lower k, then the lower j) become its new rows i
  // in order: tokens = the candidate's token, parents = n * beam + k (the row it continues),
  // and from row k the state carries on: score = the candidate's, finished = finished_k or the
  // token is p.eos, lengths + 1 and coverage + attention row k where k was unfinished (else
  // unchanged). unfinished [1] = the sentences with a hypothesis still open. Start a sentence
  // with scores [0, -inf, ...] so that its first position expands one hypothesis. A NaN in a
  // row of logits makes its log-softmax NaN: that hypothesis then offers only -inf candidates.
  // logits [rows, vocabulary] of a float dtype (vocabulary >= beam); attention, coverage f32
  // [rows, sources]; scores f32, finished, lengths, tokens, parents i32 [rows]; all on the device.
  void beam_pick(const BeamParams& p, const Tensor& logits, const Tensor& attention,
                 const BeamState& state, const Tensor& tokens, const Tensor& parents,
                 const Tensor& unfinished);

  // --- loss ------------------------------------------------------------------------------
  // Mean softmax cross-entropy over rows of logits [m, classes] with i32 labels [m]:
  // loss [1] = mean_i -log softmax(logits_i)[label_i]; dlogits = scale * dloss/dlogits
  // (scale carries a loss-scaling factor; 1 otherwise). With class_weights (f32 [classes]),
  // the mean is weighted as PyTorch's cross_entropy(weight=w) weighs it:
  // loss = sum_i w[label_i] (-log softmax(logits_i)[label_i]) / sum_i w[label_i].
  // Rows labelled p.ignore_label count for nothing: no loss, a zero gradient, and the mean is over
  // the other rows (their weights); with none left the loss and gradients are 0 (PyTorch: NaN).
  // With p.label_smoothing e (not with class weights) each row's target is 1 - e at its label
  // plus e / classes at every class: loss_i = -(1 - e) log q_label - (e / classes) sum_j log q_j,
  // dlogits_i = q - (1 - e) onehot - e / classes (times the mean's factor and scale). A label
  // outside [0, classes) other than ignore_label: the CPU throws Error(kUsage) before writing;
  // CUDA writes NaN into the loss and the row's gradient.
  void softmax_cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& loss,
                             const Tensor& dlogits, const LossScale& scale,
                             const Tensor& class_weights = {}, const CrossEntropyParams& p = {});

  // Mean binary cross-entropy of sigmoid(logits) against targets in {0, 1}, over m rows:
  // loss [1] = (1/m) sum_i max(x_i, 0) - x_i t_i + log1p(exp(-|x_i|))   (stable for any x);
  // dlogits = scale (sigmoid(x) - t) / m. logits and dlogits [m, 1] in the compute dtype,
  // targets [m, 1] and the loss f32.
  void sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& targets, const Tensor& loss,
                                    const Tensor& dlogits, const LossScale& scale);

  // Soft Dice loss of logits [samples * pixels, classes] against i32 labels [samples * pixels]
  // (p.samples blocks of p.pixels rows): with q = softmax of each row and g the labels one-hot,
  // per sample n and class c >= p.first_class, over the sample's pixels i,
  //   dice[n, c] = (2 sum_i q[i, c] g[i, c] + s) / (sum_i q[i, c] + sum_i g[i, c] + s),
  // loss [1] = 1 - mean of dice over n and c, and dlogits = scale * dloss/dlogits (mode: added
  // to dlogits, as the second loss on the same scores does).
  void soft_dice(const SoftDiceParams& p, const Tensor& logits, const Tensor& labels,
                 const Tensor& loss, const Tensor& dlogits, const LossScale& scale,
                 GradMode mode = GradMode::kOverwrite);

  // --- optimizer -------------------------------------------------------------------------
  // One fused pass over flat f32 buffers of equal size:
  //   g' = grad_scale * g + wd * w;  v = momentum * v + g';  w = w - lr * v
  // (PyTorch's SGD convention; grad_scale undoes a loss scale).
  void sgd_momentum_update(const SgdParams& p, const Tensor& weights, const Tensor& grads,
                           const Tensor& velocity);

  // Adam and AdamW, PyTorch's formulas exactly (torch.optim.Adam / AdamW), in one fused pass
  // over flat f32 buffers of equal size, at step t:
  //   AdamW (decoupled): w = w (1 - lr wd);   Adam: g' = s g + wd w   (else g' = s g)
  //   m = m + (1 - beta1)(g' - m);   v = beta2 v + (1 - beta2) g'^2
  //   w = w - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
  // `step` is an i32 [1] counter on the backend's device, 0 before the first update; the update
  // itself adds 1 to it and reads t from it on the device (bias corrections included), so a
  // recorded device graph replays correct steps. One counter per optimizer: every call adds 1.
  // With p.max_grad_norm > 0, `sum_squares` (f32 [1] on the device, sum_squares() of every
  // gradient of the model, before grad_scale) clips: s = grad_scale * min(1, max_grad_norm /
  // (grad_scale sqrt(sum_squares) + 1e-6)), read on the device, so a recording replays it.
  void adam_update(const AdamParams& p, const Tensor& step, const Tensor& weights,
                   const Tensor& grads, const Tensor& m, const Tensor& v,
                   const Tensor& sum_squares = {});
  // Lazy Adam over the rows of a [rows, cols] table (an embedding): the same step as
  // adam_update (weight decay included), but only rows with touched[r] != 0 (i32 [rows], as
  // embedding_backward marks them) change; m, v and w of the other rows keep their bits. The
  // step counter advances once per call. Unlike torch.optim.SparseAdam, eps is added after the
  // bias correction of v, as in Adam, so a table whose rows are all touched takes Adam's step.
  void sparse_adam_update(const AdamParams& p, const Tensor& step, const Tensor& weights,
                          const Tensor& grads, const Tensor& m, const Tensor& v,
                          const Tensor& touched, const Tensor& sum_squares = {});
  // out [1] (mode)= sum of x_i^2 over a flat f32 buffer (the gradients, for clipping by their
  // global norm), accumulated in f64 in an order fixed by the size alone, so the same
  // gradients give the same bits on every run; mode adds the parts of several buffers.
  void sum_squares(const Tensor& x, const Tensor& out, GradMode mode);

  // --- mixed precision -------------------------------------------------------------------
  // dst = src converted to dst's float dtype (same shape), round to nearest even.
  void cast(const Tensor& src, const Tensor& dst);
  // Whether every element is finite (loss scaling skips steps whose gradients are not).
  // Waits for the device.
  bool all_finite(const Tensor& t);

  // --- memory and data -------------------------------------------------------------------
  void fill(const Tensor& t, float value);
  void copy(const Tensor& src, const Tensor& dst);
  // Deterministic per seed, so every device and rank can make the same data and weights.
  void fill_normal(const Tensor& t, float mean, float stddev, std::uint64_t seed);
  // Uniform over (low, high] (GNMT's U(-0.1, 0.1) weights): low + (high - low) u for u uniform
  // in (0, 1] (53 bits), in double, rounded once to t's float dtype (so low itself may appear).
  void fill_uniform(const Tensor& t, float low, float high, std::uint64_t seed);
  void fill_uniform_int(const Tensor& t, std::int64_t low, std::int64_t high_exclusive,
                        std::uint64_t seed);
  // Host <-> device transfers for tests and results; host memory is plain memory.
  void to_host(const Tensor& src, void* host);
  void from_host(const void* host, const Tensor& dst);

 protected:
#define DLBENCH_OP(ret, op, ...) virtual ret op##_impl(__VA_ARGS__) = 0;
#include "engine/backend/backend_ops.def"
#undef DLBENCH_OP
};

// The backend for a device. Throws Error(kResource) when the device does not exist and
// Error(kUsage) when this build lacks its backend.
std::unique_ptr<Backend> make_backend(const Device& device);
// cuda:0 when this build has the CUDA backend and a GPU is present, else cpu.
Device default_device();
// GPUs the CUDA runtime sees (0 without the CUDA backend or a driver).
int cuda_device_count();

}  // namespace dlbench::backend
