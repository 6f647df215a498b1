// Reference ops for the op tests: naive float64 loops written straight from the math, with no
// oneDNN and nothing shared with the backends but the parameter structs. Layouts are the
// house ones (NHWC activations, KRSC conv weights, [out, in] matmul weights, row-major).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/op_params.h"

namespace dlbench::ref {

using Vec = std::vector<double>;
using backend::AdamParams;
using backend::BatchNormParams;
using backend::ConvParams;
using backend::MatmulParams;
using backend::PoolParams;
using backend::SgdParams;

// bias may be empty when !p.bias, residual (shaped as y, added before the ReLU) when !p.residual.
Vec conv_forward(const ConvParams& p, const Vec& x, const Vec& w, const Vec& bias,
                 const Vec& residual = {});
Vec conv_backward_data(const ConvParams& p, const Vec& dy, const Vec& w);
struct WeightGrads {
  Vec dw, dbias;  // dbias empty when the op has no bias
};
WeightGrads conv_backward_weights(const ConvParams& p, const Vec& x, const Vec& dy);

struct BatchNormTraining {
  Vec y, mean, inv_std, running_mean, running_var;  // running_* after the update
};
BatchNormTraining batch_norm_forward_training(const BatchNormParams& p, const Vec& x,
                                              const Vec& gamma, const Vec& beta,
                                              const Vec& running_mean, const Vec& running_var);
Vec batch_norm_forward_inference(const BatchNormParams& p, const Vec& x, const Vec& gamma,
                                 const Vec& beta, const Vec& running_mean, const Vec& running_var);
struct BatchNormGrads {
  Vec dx, dgamma, dbeta;
};
BatchNormGrads batch_norm_backward(const BatchNormParams& p, const Vec& x, const Vec& dy,
                                   const Vec& gamma, const Vec& mean, const Vec& inv_std);

Vec pool_forward(const PoolParams& p, const Vec& x);
Vec pool_backward(const PoolParams& p, const Vec& x, const Vec& dy);

Vec matmul_forward(const MatmulParams& p, const Vec& x, const Vec& w, const Vec& bias);
Vec matmul_backward_data(const MatmulParams& p, const Vec& dy, const Vec& w);
WeightGrads matmul_backward_weights(const MatmulParams& p, const Vec& x, const Vec& dy);

Vec relu_forward(const Vec& x);
Vec relu_backward(const Vec& y, const Vec& dy);
// GELU's tanh form (Google's BERT, cuBLASLt's epilogue), and its derivative times dy.
Vec gelu_forward(const Vec& x);
Vec gelu_backward(const Vec& x, const Vec& dy);
// tanh, and its derivative (1 - tanh(x)^2, from x) times dy.
Vec tanh_forward(const Vec& x);
Vec tanh_backward(const Vec& x, const Vec& dy);
// scale x[r, c] + (encode ? PE(r % sequence, c) : 0) over x [rows, width]: the encoding from
// its definition (Vaswani et al. 2017) in fairseq's layout, sines in columns [0, width / 2) and
// cosines after, the frequency exp(-ln(10000) j / max(width / 2 - 1, 1)) of column pair j.
Vec positional_encoding(const backend::PositionalEncodingParams& p, std::int64_t width,
                        const Vec& x);

struct LayerNormForward {
  Vec y, mean, inv_std;  // mean and inv_std per row
};
LayerNormForward layer_norm_forward(const backend::LayerNormParams& p, const Vec& x,
                                    const Vec& gamma, const Vec& beta);
// Through the Jacobian of each row's normalization, summed term by term (width^2 per row), not
// the backends' closed form.
struct LayerNormGrads {
  Vec dx, dgamma, dbeta;
};
LayerNormGrads layer_norm_backward(const backend::LayerNormParams& p, const Vec& x, const Vec& dy,
                                   const Vec& gamma);

struct SoftmaxCrossEntropy {
  double loss = 0;
  Vec dlogits;
};
// class_weights (one per class, or none): PyTorch's weighted mean, each row counting its
// label's weight and the sum divided by the rows' total weight. Rows labelled p.ignore_label
// count for nothing; with p.label_smoothing e, the target is (1 - e) onehot + e / classes and the
// loss -sum_j target_j log q_j.
SoftmaxCrossEntropy softmax_cross_entropy(std::int64_t rows, std::int64_t classes,
                                          const Vec& logits,
                                          const std::vector<std::int32_t>& labels, double scale,
                                          const std::vector<double>& class_weights = {},
                                          const backend::CrossEntropyParams& p = {});
// Soft Dice (Backend::soft_dice) by its definition, the gradient by the chain rule through
// the softmax; the loss is also what the finite differences of the grad case probe.
SoftmaxCrossEntropy soft_dice(const backend::SoftDiceParams& p, const Vec& logits,
                              const std::vector<std::int32_t>& labels, double scale);

struct SgdState {
  Vec weights, velocity;
};
SgdState sgd_momentum_update(const SgdParams& p, const Vec& weights, const Vec& grads,
                             const Vec& velocity);

// table [vocab, dim]; ids must lie in [0, vocab).
Vec embedding_forward(std::int64_t dim, const Vec& table, const std::vector<std::int32_t>& ids);
// The table's gradient: the dy rows summed per id (zero rows for ids that do not occur).
Vec embedding_backward(std::int64_t vocab, std::int64_t dim, const Vec& dy,
                       const std::vector<std::int32_t>& ids);
// dst (rows x dst_width) with columns [dst_col, dst_col + cols) set to (or, when accumulate,
// increased by) src's columns [src_col, src_col + cols).
Vec copy_columns(std::int64_t rows, std::int64_t src_width, const Vec& src, std::int64_t src_col,
                 std::int64_t dst_width, const Vec& dst, std::int64_t dst_col, std::int64_t cols,
                 bool accumulate);

struct BinaryCrossEntropy {
  double loss = 0;
  Vec dlogits;
};
// Written as -t log(sigmoid(x)) - (1 - t) log(1 - sigmoid(x)), the textbook form, not the
// backends' stable one (the test logits are moderate).
BinaryCrossEntropy sigmoid_binary_cross_entropy(const Vec& logits, const Vec& targets,
                                                double scale);

struct AdamState {
  Vec weights, m, v;
};
// One step t (1-based) of torch.optim.Adam (decoupled false) or AdamW (decoupled true), over
// the rows of a [rows, weights.size() / rows] buffer whose touched entry is nonzero (touched
// empty: every row). With p.max_grad_norm > 0 the scaled gradients are clipped as
// torch.nn.utils.clip_grad_norm_ clips them, their norm being p.grad_scale sqrt(sum_squares).
AdamState adam_update(const AdamParams& p, int t, const AdamState& state, const Vec& grads,
                      std::int64_t rows = 1, const std::vector<std::int32_t>& touched = {},
                      double sum_squares = 0);

}  // namespace dlbench::ref
