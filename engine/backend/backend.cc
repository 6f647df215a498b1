// The checks at the door of every op (the embedding models' ops in backend_sampled_ops.cc,
// attention's, the recurrent ops' and the optimizers' in backend_attention.cc,
// backend_recurrent.cc and backend_optimizer.cc); the backends implement the *_impl hooks.
#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

#include <cmath>
#include <initializer_list>

namespace dlbench::backend {
namespace {

// A batch norm's tail tensors: present exactly when the parameters ask for them.
void check_residual(const BatchNormParams& p, const Tensor& x, const Tensor& residual,
                    const char* op, const char* what) {
  DLBENCH_CHECK(residual.defined() == p.residual, "a residual tensor exactly when p.residual");
  if (p.residual) check_same(x, residual, op, what);
}

void check_mask(const BatchNormParams& p, const Tensor& mask, const char* op) {
  const bool relu = p.activation == Activation::kRelu;
  DLBENCH_CHECK(mask.defined() == relu, "a ReLU mask exactly when the tail has a ReLU");
  if (relu) check(mask, {p.mask_words()}, DType::kI32, op, "relu_mask");
}

// The residual's batch norm: its per-channel tensors `members` (f32 [channels]) when
// p.residual_norm asks for one, none otherwise.
void check_residual_norm(const BatchNormParams& p, std::initializer_list<const Tensor*> members,
                         const char* op) {
  DLBENCH_CHECK(!p.residual_norm || p.residual, "a residual batch norm needs a residual");
  for (const Tensor* t : members) {
    DLBENCH_CHECK(t->defined() == p.residual_norm,
                  "the residual's batch norm tensors exactly when p.residual_norm");
    if (p.residual_norm) check(*t, {p.channels}, kF32, op, "the residual's per-channel tensor");
  }
}

}  // namespace

void Backend::conv_forward(const ConvParams& p, const Tensor& x, const Tensor& w,
                           const Tensor& bias, const Tensor& y, const Tensor& residual,
                           const Tensor& statistics) {
  check(x, p.input_shape(), x.dtype(), "conv_forward", "x");
  check(w, p.weight_shape(), x.dtype(), "conv_forward", "w");
  check(y, p.output_shape(), x.dtype(), "conv_forward", "y");
  if (p.bias) check(bias, {p.k}, x.dtype(), "conv_forward", "bias");
  DLBENCH_CHECK(residual.defined() == p.residual, "a residual tensor exactly when p.residual");
  if (p.residual) check_same(y, residual, "conv_forward", "residual");
  DLBENCH_CHECK(statistics.defined() == p.statistics,
                "a statistics tensor exactly when p.statistics");
  if (p.statistics) check(statistics, p.statistics_shape(), kF32, "conv_forward", "statistics");
  conv_forward_impl(p, x, w, bias, y, residual, statistics);
}

void Backend::conv_backward_data(const ConvParams& p, const Tensor& dy, const Tensor& w,
                                 const Tensor& dx, GradMode mode) {
  DLBENCH_CHECK(p.activation == Activation::kNone, "run the activation's backward first");
  DLBENCH_CHECK(!p.residual && !p.statistics,
                "a convolution with a residual input or statistics runs forward only");
  check(dy, p.output_shape(), dy.dtype(), "conv_backward_data", "dy");
  check(w, p.weight_shape(), dy.dtype(), "conv_backward_data", "w");
  check(dx, p.input_shape(), dy.dtype(), "conv_backward_data", "dx");
  conv_backward_data_impl(p, dy, w, dx, mode);
}

void Backend::conv_backward_weights(const ConvParams& p, const Tensor& x, const Tensor& dy,
                                    const Tensor& dw, const Tensor& dbias, GradMode mode) {
  DLBENCH_CHECK(p.activation == Activation::kNone, "run the activation's backward first");
  DLBENCH_CHECK(!p.residual && !p.statistics,
                "a convolution with a residual input or statistics runs forward only");
  check(x, p.input_shape(), x.dtype(), "conv_backward_weights", "x");
  check(dy, p.output_shape(), x.dtype(), "conv_backward_weights", "dy");
  check(dw, p.weight_shape(), dw.dtype(), "conv_backward_weights", "dw");
  if (p.bias) check(dbias, {p.k}, dw.dtype(), "conv_backward_weights", "dbias");
  conv_backward_weights_impl(p, x, dy, dw, dbias, mode);
}

void Backend::batch_norm_forward_training(const BatchNormParams& p, const Tensor& x,
                                          const Tensor& gamma, const Tensor& beta, const Tensor& y,
                                          const Tensor& saved_mean, const Tensor& saved_inv_std,
                                          const Tensor& running_mean, const Tensor& running_var,
                                          const Tensor& residual, const Tensor& relu_mask,
                                          const Tensor& statistics,
                                          const ResidualNorm& residual_norm) {
  const char* op = "batch_norm_forward_training";
  DLBENCH_CHECK(x.numel() == p.rows * p.channels, "x is not [rows, channels]");
  check_same(x, y, op, "y");
  for (const Tensor* t : {&gamma, &beta, &saved_mean, &saved_inv_std, &running_mean, &running_var})
    check(*t, {p.channels}, kF32, op, "per-channel tensor");
  check_residual(p, x, residual, op, "residual");
  check_mask(p, relu_mask, op);
  DLBENCH_CHECK(statistics.defined() == p.statistics,
                "a statistics tensor exactly when p.statistics");
  if (p.statistics) check(statistics, p.statistics_shape(), kF32, op, "statistics");
  const ResidualNorm& rn = residual_norm;
  check_residual_norm(
      p,
      {&rn.gamma, &rn.beta, &rn.saved_mean, &rn.saved_inv_std, &rn.running_mean, &rn.running_var},
      op);
  DLBENCH_CHECK(rn.statistics.defined() == (p.residual_norm && p.statistics),
                "the residual's statistics exactly when it is normalized with statistics");
  if (rn.statistics.defined())
    check(rn.statistics, p.statistics_shape(), kF32, op, "the residual's statistics");
  batch_norm_forward_training_impl(p, x, gamma, beta, y, saved_mean, saved_inv_std, running_mean,
                                   running_var, residual, relu_mask, statistics, residual_norm);
}

void Backend::batch_norm_forward_inference(const BatchNormParams& p, const Tensor& x,
                                           const Tensor& gamma, const Tensor& beta,
                                           const Tensor& running_mean, const Tensor& running_var,
                                           const Tensor& y, const Tensor& residual) {
  const char* op = "batch_norm_forward_inference";
  DLBENCH_CHECK(x.numel() == p.rows * p.channels, "x is not [rows, channels]");
  check_same(x, y, op, "y");
  for (const Tensor* t : {&gamma, &beta, &running_mean, &running_var})
    check(*t, {p.channels}, kF32, op, "per-channel tensor");
  check_residual(p, x, residual, op, "residual");
  DLBENCH_CHECK(!p.residual_norm && !p.statistics,
                "a residual's batch norm and handed-over statistics are for training");
  batch_norm_forward_inference_impl(p, x, gamma, beta, running_mean, running_var, y, residual);
}

void Backend::batch_norm_backward(const BatchNormParams& p, const Tensor& x, const Tensor& dy,
                                  const Tensor& gamma, const Tensor& saved_mean,
                                  const Tensor& saved_inv_std, const Tensor& dx,
                                  const Tensor& dgamma, const Tensor& dbeta, GradMode mode,
                                  const Tensor& relu_mask, const Tensor& dresidual,
                                  GradMode residual_mode, const Tensor& residual,
                                  const ResidualNorm& residual_norm) {
  const char* op = "batch_norm_backward";
  DLBENCH_CHECK(x.numel() == p.rows * p.channels, "x is not [rows, channels]");
  check_same(x, dy, op, "dy");
  check_same(x, dx, op, "dx");
  for (const Tensor* t : {&gamma, &saved_mean, &saved_inv_std, &dgamma, &dbeta})
    check(*t, {p.channels}, kF32, op, "per-channel tensor");
  // A residual that needs no gradient (a graph input) has no dresidual.
  DLBENCH_CHECK(p.residual || !dresidual.defined(), "a residual gradient only with p.residual");
  if (dresidual.defined()) check_same(x, dresidual, op, "dresidual");
  check_mask(p, relu_mask, op);
  const ResidualNorm& rn = residual_norm;
  check_residual_norm(p, {&rn.gamma, &rn.saved_mean, &rn.saved_inv_std, &rn.dgamma, &rn.dbeta}, op);
  DLBENCH_CHECK(residual.defined() == p.residual_norm,
                "backward takes the residual exactly when it normalizes it");
  if (residual.defined()) check_same(x, residual, op, "residual");
  batch_norm_backward_impl(p, x, dy, gamma, saved_mean, saved_inv_std, dx, dgamma, dbeta, mode,
                           relu_mask, dresidual, residual_mode, residual, residual_norm);
}

void Backend::batch_norm_fold(const BatchNormParams& p, const Tensor& w, const Tensor& bias,
                              const Tensor& gamma, const Tensor& beta, const Tensor& running_mean,
                              const Tensor& running_var, const Tensor& folded_w,
                              const Tensor& folded_bias) {
  const char* op = "batch_norm_fold";
  DLBENCH_CHECK(w.defined() && w.rank() >= 1 && w.shape()[0] == p.channels,
                "batch_norm_fold: w's first dimension must be the batch norm's channels");
  check_same(w, folded_w, op, "folded_w");
  check(folded_bias, {p.channels}, w.dtype(), op, "folded_bias");
  if (bias.defined()) check(bias, {p.channels}, w.dtype(), op, "bias");
  for (const Tensor* t : {&gamma, &beta, &running_mean, &running_var})
    check(*t, {p.channels}, kF32, op, "per-channel tensor");
  DLBENCH_CHECK(!p.has_tail(), "batch_norm_fold: a batch norm with a tail does not fold");
  batch_norm_fold_impl(p, w, bias, gamma, beta, running_mean, running_var, folded_w, folded_bias);
}

void Backend::pool_forward(const PoolParams& p, const Tensor& x, const Tensor& y,
                           const Tensor& workspace) {
  check(x, p.input_shape(), x.dtype(), "pool_forward", "x");
  check(y, p.output_shape(), x.dtype(), "pool_forward", "y");
  DLBENCH_CHECK(workspace.bytes() >= pool_workspace_bytes(p), "pool workspace too small");
  pool_forward_impl(p, x, y, workspace);
}

void Backend::pool_backward(const PoolParams& p, const Tensor& x, const Tensor& y, const Tensor& dy,
                            const Tensor& workspace, const Tensor& dx, GradMode mode) {
  check(x, p.input_shape(), x.dtype(), "pool_backward", "x");
  check(y, p.output_shape(), x.dtype(), "pool_backward", "y");
  check(dy, p.output_shape(), x.dtype(), "pool_backward", "dy");
  check(dx, p.input_shape(), x.dtype(), "pool_backward", "dx");
  DLBENCH_CHECK(workspace.bytes() >= pool_workspace_bytes(p), "pool workspace too small");
  pool_backward_impl(p, x, y, dy, workspace, dx, mode);
}

void Backend::matmul_forward(const MatmulParams& p, const Tensor& x, const Tensor& w,
                             const Tensor& bias, const Tensor& y, const Tensor& pre) {
  check(x, {p.m, p.k}, x.dtype(), "matmul_forward", "x");
  check(w, {p.n, p.k}, x.dtype(), "matmul_forward", "w");
  check(y, {p.m, p.n}, x.dtype(), "matmul_forward", "y");
  if (p.bias) check(bias, {p.n}, x.dtype(), "matmul_forward", "bias");
  DLBENCH_CHECK(!p.gelu || p.activation == Activation::kNone,
                "matmul_forward: GELU and ReLU epilogues at once");
  DLBENCH_CHECK(p.gelu || !pre.defined(), "matmul_forward: a pre-activation without GELU");
  if (pre.defined()) check(pre, {p.m, p.n}, x.dtype(), "matmul_forward", "pre");
  matmul_forward_impl(p, x, w, bias, y, pre);
}

void Backend::matmul_backward_data(const MatmulParams& p, const Tensor& dy, const Tensor& w,
                                   const Tensor& dx, GradMode mode, const Tensor& gelu_input) {
  const char* op = "matmul_backward_data";
  DLBENCH_CHECK(p.activation == Activation::kNone, "run the activation's backward first");
  check(dy, {p.m, p.n}, dy.dtype(), op, "dy");
  check(w, {p.n, p.k}, dy.dtype(), op, "w");
  check(dx, {p.m, p.k}, dy.dtype(), op, "dx");
  if (p.gelu_gradient) {
    check(gelu_input, {p.m, p.k}, dy.dtype(), op, "gelu_input");
    DLBENCH_CHECK(mode == GradMode::kOverwrite,
                  "matmul_backward_data: the GELU-gradient epilogue overwrites dx");
  }
  matmul_backward_data_impl(p, dy, w, dx, mode, gelu_input);
}

void Backend::matmul_backward_weights(const MatmulParams& p, const Tensor& x, const Tensor& dy,
                                      const Tensor& dw, const Tensor& dbias, GradMode mode) {
  DLBENCH_CHECK(p.activation == Activation::kNone, "run the activation's backward first");
  check(x, {p.m, p.k}, x.dtype(), "matmul_backward_weights", "x");
  check(dy, {p.m, p.n}, x.dtype(), "matmul_backward_weights", "dy");
  check(dw, {p.n, p.k}, dw.dtype(), "matmul_backward_weights", "dw");
  if (p.bias) check(dbias, {p.n}, dw.dtype(), "matmul_backward_weights", "dbias");
  matmul_backward_weights_impl(p, x, dy, dw, dbias, mode);
}

void Backend::activation_forward(Activation a, const Tensor& x, const Tensor& y) {
  check_same(x, y, "activation_forward", "y");
  activation_forward_impl(a, x, y);
}

void Backend::activation_backward(Activation a, const Tensor& y, const Tensor& dy, const Tensor& dx,
                                  GradMode mode, const Tensor& dbias, GradMode dbias_mode) {
  const char* op = "activation_backward";
  check_same(y, dy, op, "dy");
  check_same(y, dx, op, "dx");
  if (dbias.defined()) {
    DLBENCH_CHECK(y.shape().rank() >= 1, std::string(op) + ": a bias gradient needs channels");
    check(dbias, {y.shape()[y.shape().rank() - 1]}, y.dtype(), op, "dbias");
  }
  activation_backward_impl(a, y, dy, dx, mode, dbias, dbias_mode);
}

void Backend::add(const Tensor& a, const Tensor& b, const Tensor& y) {
  check_same(a, b, "add", "b");
  check_same(a, y, "add", "y");
  add_impl(a, b, y);
}

void Backend::accumulate(const Tensor& src, const Tensor& dst) {
  check_same(src, dst, "accumulate", "dst");
  accumulate_impl(src, dst);
}

void Backend::multiply(const Tensor& a, const Tensor& b, const Tensor& y, GradMode mode) {
  check_same(a, b, "multiply", "b");
  check_same(a, y, "multiply", "y");
  multiply_impl(a, b, y, mode);
}

void Backend::gelu_forward(const Tensor& x, const Tensor& y) {
  check_same(x, y, "gelu_forward", "y");
  gelu_forward_impl(x, y);
}

void Backend::gelu_backward(const Tensor& x, const Tensor& dy, const Tensor& dx, GradMode mode) {
  check_same(x, dy, "gelu_backward", "dy");
  check_same(x, dx, "gelu_backward", "dx");
  gelu_backward_impl(x, dy, dx, mode);
}

void Backend::tanh_forward(const Tensor& x, const Tensor& y) {
  check_same(x, y, "tanh_forward", "y");
  tanh_forward_impl(x, y);
}

void Backend::tanh_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, GradMode mode) {
  check_same(y, dy, "tanh_backward", "dy");
  check_same(y, dx, "tanh_backward", "dx");
  tanh_backward_impl(y, dy, dx, mode);
}

namespace {

// The probability, the step counter, and the output shaped and typed as the input.
void check_dropout(const DropoutParams& p, const Tensor& step, const Tensor& in, const Tensor& out,
                   const char* op) {
  DLBENCH_CHECK(p.probability >= 0.0f && p.probability < 1.0f,
                std::string(op) + ": the probability must be in [0, 1)");
  check(step, {1}, DType::kI32, op, "step");
  check_same(in, out, op, "output");
}

}  // namespace

void Backend::dropout_forward(const DropoutParams& p, const Tensor& step, const Tensor& x,
                              const Tensor& y) {
  check_dropout(p, step, x, y, "dropout_forward");
  dropout_forward_impl(p, step, x, y);
}

void Backend::dropout_backward(const DropoutParams& p, const Tensor& step, const Tensor& dy,
                               const Tensor& dx, GradMode mode) {
  check_dropout(p, step, dy, dx, "dropout_backward");
  dropout_backward_impl(p, step, dy, dx, mode);
}

void Backend::positional_encoding(const PositionalEncodingParams& p, const Tensor& x,
                                  const Tensor& y, GradMode mode) {
  const std::string op = "positional_encoding";
  DLBENCH_CHECK(x.defined() && x.rank() == 2, op + ": x must be [rows, width]");
  check_same(x, y, op.c_str(), "y");
  DLBENCH_CHECK(x.dtype() == DType::kF32 || x.dtype() == DType::kF16 || x.dtype() == DType::kBF16,
                op + ": x and y must be f32, f16 or bf16, not " + to_string(x.dtype()));
  DLBENCH_CHECK(x.device() == device() && y.device() == device(),
                op + ": x and y must live on " + to_string(device()));
  DLBENCH_CHECK(p.sequence >= 1, op + ": the sequence must be at least 1 position long");
  DLBENCH_CHECK(x.dim(0) % p.sequence == 0, op + ": " + std::to_string(x.dim(0)) +
                                                " rows are not whole sequences of " +
                                                std::to_string(p.sequence));
  DLBENCH_CHECK(
      x.dim(1) >= 2 && x.dim(1) % 2 == 0,
      op + ": the width must be even (sines, then cosines), not " + std::to_string(x.dim(1)));
  DLBENCH_CHECK(std::isfinite(p.scale), op + ": the scale must be finite");
  positional_encoding_impl(p, x, y, mode);
}

namespace {

struct Named {
  const Tensor& tensor;
  const char* name;
};

// x [rows, width] (any leading shape of that size), its per-row statistics f32 [rows] and its
// per-column parameters f32 [width]; a finite epsilon >= 0.
void check_layer_norm(const LayerNormParams& p, const Tensor& x, std::initializer_list<Named> rows,
                      std::initializer_list<Named> columns, const char* op) {
  DLBENCH_CHECK(p.rows >= 1 && p.width >= 1, std::string(op) + ": rows and width must be >= 1");
  DLBENCH_CHECK(std::isfinite(p.epsilon) && p.epsilon >= 0.0f,
                std::string(op) + ": epsilon must be a finite number >= 0");
  DLBENCH_CHECK(x.defined() && x.numel() == p.rows * p.width && x.shape().rank() >= 1 &&
                    x.shape()[x.shape().rank() - 1] == p.width,
                std::string(op) + ": x is not [rows, width]");
  for (const Named& t : rows) check(t.tensor, {p.rows}, kF32, op, t.name);
  for (const Named& t : columns) check(t.tensor, {p.width}, kF32, op, t.name);
}

// A loss scale: a finite number, or f32 [1] on the backend's device.
void check_loss_scale(const LossScale& scale, const Device& device, const char* op) {
  if (!scale.on_device.defined()) {
    DLBENCH_CHECK(std::isfinite(scale.value), std::string(op) + ": the loss scale must be finite");
    return;
  }
  check(scale.on_device, {1}, kF32, op, "loss scale");
  DLBENCH_CHECK(scale.on_device.device() == device,
                std::string(op) + ": the loss scale must live on " + to_string(device));
}

}  // namespace

void Backend::layer_norm_forward(const LayerNormParams& p, const Tensor& x, const Tensor& gamma,
                                 const Tensor& beta, const Tensor& y, const Tensor& saved_mean,
                                 const Tensor& saved_inv_std) {
  const char* op = "layer_norm_forward";
  check_layer_norm(p, x, {{saved_mean, "saved_mean"}, {saved_inv_std, "saved_inv_std"}},
                   {{gamma, "gamma"}, {beta, "beta"}}, op);
  check_same(x, y, op, "y");
  layer_norm_forward_impl(p, x, gamma, beta, y, saved_mean, saved_inv_std);
}

void Backend::layer_norm_backward(const LayerNormParams& p, const Tensor& x, const Tensor& dy,
                                  const Tensor& gamma, const Tensor& saved_mean,
                                  const Tensor& saved_inv_std, const Tensor& dx, GradMode mode,
                                  const Tensor& dgamma, const Tensor& dbeta) {
  const char* op = "layer_norm_backward";
  check_layer_norm(p, x, {{saved_mean, "saved_mean"}, {saved_inv_std, "saved_inv_std"}},
                   {{gamma, "gamma"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}}, op);
  check_same(x, dy, op, "dy");
  check_same(x, dx, op, "dx");
  layer_norm_backward_impl(p, x, dy, gamma, saved_mean, saved_inv_std, dx, mode, dgamma, dbeta);
}

void Backend::softmax_cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& loss,
                                    const Tensor& dlogits, const LossScale& scale,
                                    const Tensor& class_weights, const CrossEntropyParams& p) {
  const char* op = "softmax_cross_entropy";
  check_loss_scale(scale, device(), op);
  DLBENCH_CHECK(logits.rank() == 2, "logits must be [rows, classes]");
  check(labels, {logits.dim(0)}, DType::kI32, op, "labels");
  check(loss, {1}, kF32, op, "loss");
  check_same(logits, dlogits, op, "dlogits");
  if (class_weights.defined()) check(class_weights, {logits.dim(1)}, kF32, op, "class_weights");
  DLBENCH_CHECK(p.label_smoothing >= 0.0f && p.label_smoothing <= 1.0f,
                "softmax_cross_entropy: label smoothing must lie in [0, 1]");
  DLBENCH_CHECK(p.label_smoothing == 0.0f || !class_weights.defined(),
                "softmax_cross_entropy: label smoothing with class weights is not supported");
  softmax_cross_entropy_impl(logits, labels, loss, dlogits, scale, class_weights, p);
}

void Backend::copy_columns(const Tensor& src, std::int64_t src_col, const Tensor& dst,
                           std::int64_t dst_col, std::int64_t cols, GradMode mode) {
  const char* op = "copy_columns";
  DLBENCH_CHECK(src.defined() && src.rank() == 2, "copy_columns: src must be [rows, columns]");
  DLBENCH_CHECK(dst.defined() && dst.rank() == 2, "copy_columns: dst must be [rows, columns]");
  check(dst, {src.dim(0), dst.dim(1)}, src.dtype(), op, "dst");
  DLBENCH_CHECK(cols >= 0 && src_col >= 0 && src_col + cols <= src.dim(1),
                "copy_columns: source columns [" + std::to_string(src_col) + ", " +
                    std::to_string(src_col + cols) + ") outside [0, " + std::to_string(src.dim(1)) +
                    ")");
  DLBENCH_CHECK(dst_col >= 0 && dst_col + cols <= dst.dim(1),
                "copy_columns: destination columns [" + std::to_string(dst_col) + ", " +
                    std::to_string(dst_col + cols) + ") outside [0, " + std::to_string(dst.dim(1)) +
                    ")");
  DLBENCH_CHECK(src.data() != dst.data() || src_col + cols <= dst_col || dst_col + cols <= src_col,
                "copy_columns: source and destination columns overlap");
  copy_columns_impl(src, src_col, dst, dst_col, cols, mode);
}

void Backend::sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& targets,
                                           const Tensor& loss, const Tensor& dlogits,
                                           const LossScale& scale) {
  const char* op = "sigmoid_binary_cross_entropy";
  check_loss_scale(scale, device(), op);
  DLBENCH_CHECK(logits.defined() && logits.rank() == 2 && logits.dim(1) == 1,
                "sigmoid_binary_cross_entropy: logits must be [rows, 1]");
  check(targets, logits.shape(), kF32, op, "targets");
  check(loss, {1}, kF32, op, "loss");
  check_same(logits, dlogits, op, "dlogits");
  sigmoid_binary_cross_entropy_impl(logits, targets, loss, dlogits, scale);
}

void Backend::soft_dice(const SoftDiceParams& p, const Tensor& logits, const Tensor& labels,
                        const Tensor& loss, const Tensor& dlogits, const LossScale& scale,
                        GradMode mode) {
  const char* op = "soft_dice";
  check_loss_scale(scale, device(), op);
  DLBENCH_CHECK(p.samples > 0 && p.pixels > 0 && p.classes > 0 && p.first_class >= 0 &&
                    p.first_class < p.classes && p.smooth > 0,
                "soft_dice: samples, pixels and classes must be positive, first_class a class, "
                "smooth positive");
  check(logits, {p.samples * p.pixels, p.classes}, logits.dtype(), op, "logits");
  check(labels, {p.samples * p.pixels}, DType::kI32, op, "labels");
  check(loss, {1}, kF32, op, "loss");
  check_same(logits, dlogits, op, "dlogits");
  soft_dice_impl(p, logits, labels, loss, dlogits, scale, mode);
}

void Backend::cast(const Tensor& src, const Tensor& dst) {
  DLBENCH_CHECK(src.shape() == dst.shape(), "cast: shapes differ");
  cast_impl(src, dst);
}

bool Backend::all_finite(const Tensor& t) {
  return all_finite_impl(t);
}

void Backend::fill(const Tensor& t, float value) {
  fill_impl(t, value);
}

void Backend::copy(const Tensor& src, const Tensor& dst) {
  check_same(src, dst, "copy", "dst");
  copy_impl(src, dst);
}

void Backend::fill_normal(const Tensor& t, float mean, float stddev, std::uint64_t seed) {
  fill_normal_impl(t, mean, stddev, seed);
}

void Backend::fill_uniform(const Tensor& t, float low, float high, std::uint64_t seed) {
  DLBENCH_CHECK(std::isfinite(low) && std::isfinite(high) && high > low,
                "fill_uniform: low and high must be finite, low below high");
  fill_uniform_impl(t, low, high, seed);
}

void Backend::fill_uniform_int(const Tensor& t, std::int64_t low, std::int64_t high_exclusive,
                               std::uint64_t seed) {
  DLBENCH_CHECK(high_exclusive > low, "empty integer range");
  fill_uniform_int_impl(t, low, high_exclusive, seed);
}

void Backend::to_host(const Tensor& src, void* host) {
  to_host_impl(src, host);
}
void Backend::from_host(const void* host, const Tensor& dst) {
  from_host_impl(host, dst);
}

}  // namespace dlbench::backend
