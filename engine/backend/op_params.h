// Parameters of each op family, shared by every backend. Shapes follow the house layout:
// activations NHWC, convolution weights KRSC, matmul weights [out, in], row-major.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/core/shape.h"
#include "engine/core/tensor.h"

namespace dlbench::backend {

// How fp32 tensors are multiplied: strict IEEE fp32, or TF32 tensor cores (GPU only; the CPU
// backend is always strict). f16/bf16 tensors always use their tensor-core paths.
enum class MathMode { kStrict, kTf32 };

// A loss gradient's factor (fp16's loss scale; 1 otherwise): a number, or an f32 [1] tensor on
// the backend's device that the loss reads when it runs. A recorded device graph replays what the
// tensor holds then, so a dynamic loss scale can change without recording the step again.
struct LossScale {
  LossScale(float value = 1.0f) : value(value) {}  // NOLINT: a number converts implicitly
  explicit LossScale(Tensor on_device) : on_device(std::move(on_device)) {}
  float value = 1.0f;
  Tensor on_device;  // when defined, the factor, and `value` is not used
};

// Whether an op writes its gradient output or adds to what is there (fan-out edges
// accumulate). An enum, never a bool, so a call site says which one it means.
enum class GradMode { kOverwrite, kAccumulate };

// An activation applied to an op's output in the same op (an epilogue), after its bias. Only
// the forward op takes one: the backward ops take kNone, the activation's backward runs first.
enum class Activation { kNone, kRelu };

// Per-axis values outermost first, the depth only in 3D, and dims in the order cuDNN and oneDNN
// name them whatever the memory order: [a, b, (depth,) height, width] for [N, C, ...] or
// [K, C, ...]. One place for every backend's descriptors.
inline std::vector<std::int64_t> spatial_axes(int spatial_dims, std::int64_t depth,
                                              std::int64_t height, std::int64_t width) {
  if (spatial_dims == 3) return {depth, height, width};
  return {height, width};
}
inline std::vector<std::int64_t> logical_axes(int spatial_dims, std::int64_t a, std::int64_t b,
                                              std::int64_t depth, std::int64_t height,
                                              std::int64_t width) {
  std::vector<std::int64_t> dims = spatial_axes(spatial_dims, depth, height, width);
  dims.insert(dims.begin(), {a, b});
  return dims;
}

// A convolution over 2 spatial dimensions (activations NHWC, weights KRSC) or 3 (NDHWC and
// KTRSC: `d` the input's depth, `t` the filter's); the depth fields stay 1 (pad 0) in 2D, so
// every count below holds for both.
struct ConvParams {
  int spatial_dims = 2;
  std::int64_t n = 1, d = 1, h = 1, w = 1, c = 1;  // input
  std::int64_t k = 1, t = 1, r = 1, s = 1;  // output channels, filter depth, height and width
  int stride_d = 1, stride_h = 1, stride_w = 1;
  int pad_d = 0, pad_h = 0, pad_w = 0;
  int dilation_d = 1, dilation_h = 1, dilation_w = 1;
  bool bias = false;
  // Forward only: adds a second input shaped as y after the bias, before the activation, so
  // y = act(conv(x, w) + b + r): a residual block's tail once its batch norm is folded in.
  bool residual = false;
  Activation activation = Activation::kNone;  // where the backend fuses it (Backend::supports)
  MathMode math = MathMode::kStrict;
  // Forward only: also writes the batch-norm statistics of y, f32 [2, K]: row 0 the sum of
  // y[n, p, q, k] over n, p and q, row 1 the sum of its squares, so that a training batch norm
  // after the convolution need not read y once more for them.
  bool statistics = false;

  bool volumetric() const { return spatial_dims == 3; }
  std::int64_t out_d() const { return (d + 2 * pad_d - dilation_d * (t - 1) - 1) / stride_d + 1; }
  std::int64_t out_h() const { return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1; }
  std::int64_t out_w() const { return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1; }
  Shape input_shape() const { return volumetric() ? Shape{n, d, h, w, c} : Shape{n, h, w, c}; }
  Shape weight_shape() const { return volumetric() ? Shape{k, t, r, s, c} : Shape{k, r, s, c}; }
  Shape output_shape() const {
    return volumetric() ? Shape{n, out_d(), out_h(), out_w(), k} : Shape{n, out_h(), out_w(), k};
  }
  Shape statistics_shape() const { return {2, k}; }
  // Positions of one sample (its rows as [positions, channels]) and of the whole batch.
  std::int64_t in_positions() const { return d * h * w; }
  std::int64_t out_positions() const { return out_d() * out_h() * out_w(); }
  std::int64_t output_rows() const { return n * out_positions(); }
  // Taps of one output element per input channel.
  std::int64_t taps() const { return t * r * s; }
  // Multiply-accumulates of the forward pass (bias adds not counted).
  std::int64_t macs() const { return output_rows() * k * taps() * c; }
  // [N, C, (D,) H, W] and [K, C, (T,) R, S] dims and per-axis geometry (logical_axes).
  std::vector<std::int64_t> logical_input_dims() const {
    return logical_axes(spatial_dims, n, c, d, h, w);
  }
  std::vector<std::int64_t> logical_weight_dims() const {
    return logical_axes(spatial_dims, k, c, t, r, s);
  }
  std::vector<std::int64_t> logical_output_dims() const {
    return logical_axes(spatial_dims, n, k, out_d(), out_h(), out_w());
  }
  std::vector<std::int64_t> spatial_pads() const {
    return spatial_axes(spatial_dims, pad_d, pad_h, pad_w);
  }
  std::vector<std::int64_t> spatial_strides() const {
    return spatial_axes(spatial_dims, stride_d, stride_h, stride_w);
  }
  std::vector<std::int64_t> spatial_dilations() const {
    return spatial_axes(spatial_dims, dilation_d, dilation_h, dilation_w);
  }
  // Every field, the batch first: what tells two convolutions apart (backends key their plans
  // and primitives by it).
  static constexpr std::size_t kFields = 23;
  std::array<std::int64_t, kFields> fields() const {
    return {n,
            spatial_dims,
            d,
            h,
            w,
            c,
            k,
            t,
            r,
            s,
            stride_d,
            stride_h,
            stride_w,
            pad_d,
            pad_h,
            pad_w,
            dilation_d,
            dilation_h,
            dilation_w,
            bias ? 1 : 0,
            static_cast<std::int64_t>(activation),
            residual ? 1 : 0,
            statistics ? 1 : 0};
  }
};

// Batch norm over the channels of an NHWC tensor viewed as [rows = N*H*W, channels].
// With a tail (where the backend fuses it, Backend::supports): y = act(bn(x) + residual), a
// residual block's BN + add + ReLU in one op. Training with a ReLU writes the ReLU's mask as
// bits (bit e % 32 of 32-bit word e / 32 is 1 where element e passed), and backward reads it,
// so the activation's backward never reads a full-size tensor.
struct BatchNormParams {
  std::int64_t rows = 1;
  std::int64_t channels = 1;
  float epsilon = 1e-5f;
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch
  bool residual = false;  // adds a second input after normalizing
  Activation activation = Activation::kNone;
  // Training only: the batch's statistics come in as the sums of x and of x^2 per channel (f32
  // [2, channels], as the convolution that wrote x made them: ConvParams::statistics), so x
  // is read once, to normalize it. The variance is then E[x^2] - mean^2.
  bool statistics = false;
  // Training, with `residual`: the residual is batch-normalized in the same op before the add,
  // y = relu(bn(x) + bn'(r)), bn' with its own parameters and statistics (Backend's
  // ResidualNorm) over the same rows and channels, epsilon and momentum: ResNet's downsampling
  // tails, where both branches end in a batch norm. With `statistics`, both come with sums.
  bool residual_norm = false;

  bool has_tail() const { return residual || activation != Activation::kNone; }
  Shape statistics_shape() const { return {2, channels}; }
  // The normalization alone: what folds into a convolution's weights (the tail stays its own).
  BatchNormParams without_tail() const {
    BatchNormParams p = *this;
    p.residual = false;
    p.residual_norm = false;
    p.activation = Activation::kNone;
    return p;
  }
  // The ReLU mask's size in 32-bit words.
  std::int64_t mask_words() const { return (rows * channels + 31) / 32; }
};

enum class PoolKind { kMax, kAverage };

// Pooling over 2 spatial dimensions (NHWC) or 3 (NDHWC: `d` the depth, the window's depth
// `window_d`); the depth fields stay 1 (pad 0) in 2D, so every count below holds for both.
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  int spatial_dims = 2;
  std::int64_t n = 1, d = 1, h = 1, w = 1, c = 1;
  int window_d = 1, window_h = 1, window_w = 1;
  int stride_d = 1, stride_h = 1, stride_w = 1;
  int pad_d = 0, pad_h = 0, pad_w = 0;  // average pooling excludes padding from the divisor

  bool volumetric() const { return spatial_dims == 3; }
  std::int64_t out_d() const { return (d + 2 * pad_d - window_d) / stride_d + 1; }
  std::int64_t out_h() const { return (h + 2 * pad_h - window_h) / stride_h + 1; }
  std::int64_t out_w() const { return (w + 2 * pad_w - window_w) / stride_w + 1; }
  Shape input_shape() const { return volumetric() ? Shape{n, d, h, w, c} : Shape{n, h, w, c}; }
  Shape output_shape() const {
    return volumetric() ? Shape{n, out_d(), out_h(), out_w(), c} : Shape{n, out_h(), out_w(), c};
  }
  std::int64_t window_positions() const { return std::int64_t{window_d} * window_h * window_w; }
  std::vector<std::int64_t> logical_input_dims() const {
    return logical_axes(spatial_dims, n, c, d, h, w);
  }
  std::vector<std::int64_t> logical_output_dims() const {
    return logical_axes(spatial_dims, n, c, out_d(), out_h(), out_w());
  }
  std::vector<std::int64_t> spatial_windows() const {
    return spatial_axes(spatial_dims, window_d, window_h, window_w);
  }
  std::vector<std::int64_t> spatial_strides() const {
    return spatial_axes(spatial_dims, stride_d, stride_h, stride_w);
  }
  std::vector<std::int64_t> spatial_pads() const {
    return spatial_axes(spatial_dims, pad_d, pad_h, pad_w);
  }
  // Every field: what tells two poolings apart (backends key their primitives by it).
  static constexpr std::size_t kFields = 16;
  std::array<std::int64_t, kFields> fields() const {
    return {static_cast<std::int64_t>(kind),
            spatial_dims,
            n,
            d,
            h,
            w,
            c,
            window_d,
            window_h,
            window_w,
            stride_d,
            stride_h,
            stride_w,
            pad_d,
            pad_h,
            pad_w};
  }
  static PoolParams global_average(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c) {
    PoolParams p;
    p.kind = PoolKind::kAverage;
    p.n = n, p.h = h, p.w = w, p.c = c;
    p.window_h = static_cast<int>(h), p.window_w = static_cast<int>(w);
    p.stride_h = static_cast<int>(h), p.stride_w = static_cast<int>(w);
    return p;
  }
};

// y[m, n] = act(x[m, k] · W[n, k]ᵀ + b[n]); the epilogue is fused where the backend can.
struct MatmulParams {
  std::int64_t m = 1, k = 1, n = 1;
  bool bias = false;
  Activation activation = Activation::kNone;
  MathMode math = MathMode::kStrict;
  // Forward only: y = GELU(x · Wᵀ + b) (the tanh form), in the product's epilogue (cuBLASLt's
  // GELU_BIAS, or GELU_AUX_BIAS where the pre-activation is written too, for backward).
  bool gelu = false;
  // Backward-data only: x was GELU(x_pre), and dx is the gradient of x_pre, (dy · W) times
  // GELU'(x_pre), in the product's epilogue (cuBLASLt's DGELU) rather than a pass of its own.
  bool gelu_gradient = false;
  std::int64_t macs() const { return m * k * n; }
};

struct SgdParams {
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float grad_scale = 1.0f;  // gradients are multiplied by this first (1 / loss scale)
};

// Layer norm over the last dimension of x [rows, width] (BERT's, the Transformer's): each row
// normalized by its own mean and biased variance, then scaled and shifted per column; see
// Backend::layer_norm_forward.
struct LayerNormParams {
  std::int64_t rows = 1;
  std::int64_t width = 1;
  float epsilon = 1e-12f;  // BERT's (PyTorch's nn.LayerNorm defaults to 1e-5)
};

// Dropout (Backend::dropout_forward): the share of elements zeroed, and the stream the masks are
// drawn from.
struct DropoutParams {
  float probability = 0.1f;  // BERT's; in [0, 1)
  std::uint64_t seed = 0;
};

// The Transformer's sinusoidal position encoding (Vaswani et al. 2017, "Attention Is All You
// Need", section 3.5) added to a scaled input (Backend::positional_encoding), in the
// fairseq/tensor2tensor layout: sines in the first half of the columns, cosines in the second.
// x and y are [rows, width] with rows = batch * sequence, row r at position r % sequence.
struct PositionalEncodingParams {
  std::int64_t sequence = 1;  // rows are [batch * sequence]: row r is position r % sequence
  float scale = 1.0f;         // x's factor: sqrt(width) for the Transformer's embeddings
  bool encode = true;         // add the encoding (forward); false: y = scale x (backward)
};

// See AttentionParams::kernel.
enum class AttentionKernel { kAuto, kUnfused, kFlash, kCudnn };
const char* to_string(AttentionKernel kernel);

// Scaled dot-product attention of `heads` heads at once (Backend::attention_forward): queries of
// seq_q positions against keys and values of seq_kv positions per sample, each head head_dim
// wide. `causal` hides the keys after a query's own position (a decoder's self-attention).
struct AttentionParams {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t seq_q = 1;
  std::int64_t seq_kv = 1;
  std::int64_t head_dim = 64;
  float scale = 0.125f;  // the scores' factor: 1 / sqrt(head_dim) as the Transformer's
  bool causal = false;
  MathMode math = MathMode::kStrict;  // f32 products: strict or TF32
  // Which implementation runs where a backend has more than one (CUDA: cuDNN's fused attention,
  // our own FlashAttention-style kernels, the unfused reference path). kAuto takes the fastest
  // that can run the call: on CUDA cuDNN's (measured on an H200, 2026-11-29, 2.4-4.5x faster
  // than the unfused path at BERT's shapes), else the unfused path. Naming one runs it or fails
  // with the reason it cannot; the CPU has one path and runs it whatever is named.
  AttentionKernel kernel = AttentionKernel::kAuto;
  std::int64_t width() const { return heads * head_dim; }  // the columns of q, k, v and o
  // The products of one forward pass: q k^T and p v, per head and sample.
  std::int64_t macs() const { return 2 * batch * heads * seq_q * seq_kv * head_dim; }
};

// One unidirectional LSTM layer over a whole sequence (Backend::lstm_forward): the recurrent layer
// of GNMT. Rows are time-major, row t * batch + b the sample b at step t, as cuDNN and oneDNN
// read them without a transpose. Gates in PyTorch's and cuDNN's order i, f, g, o:
//   i, f, o = sigmoid(W_i* x_t + b_i* + W_h* h_{t-1} + b_h*),  g = tanh(the same of g)
//   c_t = f c_{t-1} + i g,   h_t = o tanh(c_t)
// The weights are one flat tensor, [W_ih (4H x I) | W_hh (4H x H) | b_ih (4H) | b_hh (4H)], each
// matrix row-major [gate * H + unit, column]: PyTorch's weight_ih_l0, weight_hh_l0, bias_ih_l0
// and bias_hh_l0 back to back, and cuDNN's weight space for one layer with two biases.
struct LstmParams {
  std::int64_t batch = 1;
  std::int64_t steps = 1;
  std::int64_t input = 1;
  std::int64_t hidden = 1;
  MathMode math = MathMode::kStrict;  // f32 products: strict or TF32
  std::int64_t gates() const { return 4 * hidden; }
  std::int64_t weights() const { return gates() * (input + hidden + 2); }
  Shape input_shape() const { return {steps * batch, input}; }
  Shape output_shape() const { return {steps * batch, hidden}; }
  Shape state_shape() const { return {batch, hidden}; }
  // The products of one forward pass: both matrices at every step.
  std::int64_t macs() const { return steps * batch * gates() * (input + hidden); }
};

// Normalized Bahdanau attention (GNMT's: Bahdanau et al. 2015, the score vector weight-normalized
// as in Salimans & Kingma 2016), between the projections that make its queries and keys and the
// layers that read its context (Backend::additive_attention_forward). Rows are time-major as the
// LSTM's: query row t * batch + b is sample b's target step t, key and value row s * batch + b its
// source position s.
struct AdditiveAttentionParams {
  std::int64_t batch = 1;
  std::int64_t queries = 1;      // target steps
  std::int64_t keys = 1;         // source positions, padded
  std::int64_t width = 1;        // of the projected queries and keys, and of v
  std::int64_t value_width = 1;  // of the values and the context
  Shape query_shape() const { return {queries * batch, width}; }
  Shape key_shape() const { return {keys * batch, width}; }
  Shape value_shape() const { return {keys * batch, value_width}; }
  Shape output_shape() const { return {queries * batch, value_width}; }
  Shape probs_shape() const { return {batch, queries, keys}; }
  // One forward pass: a tanh and a product per score term, and the context's products.
  std::int64_t macs() const { return batch * queries * keys * (width + value_width); }
};

// Time-major sequences of a batch (Backend::reverse_sequences): row t * batch + b is sample b at
// step t, as the LSTM reads them; each sample's own length is at most `steps`.
struct SequenceParams {
  std::int64_t steps = 1;
  std::int64_t batch = 1;
};

// One position of greedy decoding (Backend::greedy_pick): `batch` sentences, each choosing its
// next token from a row of `vocabulary` scores; eos closes a sentence, pad fills after it.
struct GreedyParams {
  std::int64_t batch = 1;
  std::int64_t vocabulary = 1;
  std::int32_t eos = 2, pad = 0;  // data::SentenceIds's
};

// One position of beam search (Backend::beam_pick): `batch` sentences of `beam` hypotheses each
// (row n * beam + k), each scoring its next token over `vocabulary` ids, with attention over
// `sources` source positions.
struct BeamParams {
  static constexpr std::int64_t kMaxBeam = 8;
  std::int64_t batch = 1;
  std::int64_t beam = 1;  // 1..kMaxBeam
  std::int64_t vocabulary = 1;
  std::int64_t sources = 1;
  std::int32_t eos = 2, pad = 0;
  std::int64_t rows() const { return batch * beam; }
};

// Softmax cross-entropy's options beyond class weights (Backend::softmax_cross_entropy), as
// PyTorch's cross_entropy names them: rows labelled ignore_label count for nothing (BERT's
// unmasked positions, padding), and label_smoothing moves that share of each row's target from
// its label to every class evenly (the Transformer's and GNMT's 0.1).
struct CrossEntropyParams {
  std::int32_t ignore_label = -100;  // PyTorch's ignore_index
  float label_smoothing = 0.0f;      // in [0, 1]
};

// Soft Dice loss over the softmax of per-pixel scores (segmentation), as MLPerf's KiTS19
// reference computes it: per sample and per class from first_class on (the background left
// out), over the sample's pixels; see Backend::soft_dice.
struct SoftDiceParams {
  std::int64_t samples = 1;
  std::int64_t pixels = 1;  // per sample: logits are [samples * pixels, classes]
  std::int64_t classes = 2;
  std::int64_t first_class = 1;
  float smooth = 1e-6f;  // added to numerator and denominator: an absent class scores 1
};

// Adam (decoupled = false) and AdamW (decoupled = true), PyTorch's formulas, so the peers'
// learning rates carry over. The step count lives on the device (see Backend::adam_update).
struct AdamParams {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;
  float grad_scale = 1.0f;  // gradients are multiplied by this first (1 / loss scale)
  bool decoupled = true;    // AdamW: w -= lr wd w; else Adam's L2 term: g += wd w
  // Clipping by global norm (PyTorch's clip_grad_norm_, GNMT's 5): when > 0, the scaled
  // gradients are scaled once more by min(1, max_grad_norm / (norm + 1e-6)), the norm taken over
  // every gradient of the model (Backend::adam_update's sum_squares).
  float max_grad_norm = 0.0f;
};

// Negatives for implicit feedback (NCF's training data, Backend::sample_negatives): `items`
// is the range [0, items) negatives are drawn from, `seed` the stream they come from.
struct NegativeSamplingParams {
  std::int64_t items = 1;
  std::uint64_t seed = 0;
};

// Word2Vec's candidates (Backend::sample_candidates): the stream negatives are drawn from.
struct CandidateSamplingParams {
  std::uint64_t seed = 0;
};

}  // namespace dlbench::backend
