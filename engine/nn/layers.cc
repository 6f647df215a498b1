#include "engine/nn/layers.h"

#include <algorithm>
#include <string>

namespace dlbench::nn {
namespace {

void expect_shape(const Shape& got, const Shape& want, const char* layer) {
  if (!(got == want))
    throw Error(ErrorKind::kInternal, std::string(layer) + ": input shape " + got.str() +
                                          " does not match the layer's " + want.str());
}

Tensor flat(const Tensor& t, std::int64_t rows) {
  return t.reshaped({rows, t.numel() / rows});
}

// Gradients that flow unchanged (residual add) are copied or accumulated.
void pass_gradient(backend::Backend& be, const Tensor& dy, const Tensor& dx, GradMode mode) {
  if (!dx.defined()) return;
  if (mode == GradMode::kOverwrite)
    be.copy(dy, dx);
  else
    be.accumulate(dy, dx);
}

// The backend writes a layer's weight and bias gradients in one mode. Where they differ (a
// shared weight beside a bias of its own), the overwritten ones are zeroed and all accumulate.
GradMode one_param_grad_mode(const StepContext& ctx) {
  const auto& modes = ctx.param_grad_modes;
  if (std::all_of(modes.begin(), modes.end(), [&](GradMode m) { return m == modes[0]; }))
    return modes.empty() ? GradMode::kOverwrite : modes[0];
  for (std::size_t i = 0; i < modes.size(); ++i)
    if (modes[i] == GradMode::kOverwrite) ctx.backend.fill(ctx.param_grads[i], 0.0f);
  return GradMode::kAccumulate;
}

}  // namespace

// --- Conv2d: y = conv(x, W) + b; dx = conv_transpose(dy, W); dW = x ⋆ dy; db = Σ dy -------
Shape Conv2d::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], p_.input_shape(), "conv2d");
  return p_.output_shape();
}

std::vector<ParamDecl> Conv2d::params() const {
  std::vector<ParamDecl> decls{{"weight", p_.weight_shape(), Init::kKaimingNormal,
                                p_.r * p_.s * p_.c, ParamGroup::kDecayed}};
  if (p_.bias) decls.push_back({"bias", {p_.k}, Init::kZeros, 1, ParamGroup::kNotDecayed});
  return decls;
}

void Conv2d::forward(const StepContext& ctx) {
  Tensor bias = p_.bias ? ctx.params[1] : Tensor();
  ctx.backend.conv2d_forward(p_, ctx.inputs[0], ctx.params[0], bias, ctx.output());
}

void Conv2d::backward(const StepContext& ctx) {
  Tensor dbias = p_.bias ? ctx.param_grads[1] : Tensor();
  ctx.backend.conv2d_backward_weights(p_, ctx.inputs[0], ctx.output_grad(), ctx.param_grads[0],
                                      dbias, one_param_grad_mode(ctx));
  if (ctx.input_grads[0].defined())
    ctx.backend.conv2d_backward_data(p_, ctx.output_grad(), ctx.params[0], ctx.input_grads[0],
                                     ctx.input_grad_modes[0]);
}

// --- BatchNorm: y = γ (x - μ) / sqrt(σ² + ε) + β ------------------------------------------
enum BatchNormState { kRunningMean, kRunningVar, kSavedMean, kSavedInvStd };

Shape BatchNorm::output_shape(std::span<const Shape> inputs) const {
  if (inputs[0].numel() != p_.rows * p_.channels || inputs[0][inputs[0].rank() - 1] != p_.channels)
    throw Error(ErrorKind::kInternal,
                "batch_norm: input " + inputs[0].str() + " does not have the layer's channels");
  return inputs[0];
}

std::vector<ParamDecl> BatchNorm::params() const {
  ParamDecl gamma{"gamma", {p_.channels}, Init::kOnes, 1, ParamGroup::kKeptF32};
  ParamDecl beta{"beta", {p_.channels}, Init::kZeros, 1, ParamGroup::kKeptF32};
  return {gamma, beta};
}

std::vector<StateDecl> BatchNorm::state(backend::Backend&) const {
  std::size_t bytes = static_cast<std::size_t>(p_.channels) * sizeof(float);
  return {{"running_mean", bytes, Init::kZeros},
          {"running_var", bytes, Init::kOnes},
          {"saved_mean", bytes, Init::kZeros},
          {"saved_inv_std", bytes, Init::kZeros}};
}

void BatchNorm::forward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  Tensor x = flat(ctx.inputs[0], p_.rows), y = flat(ctx.output(), p_.rows);
  if (ctx.mode == Mode::kTrain)
    ctx.backend.batch_norm_forward_training(p_, x, ctx.params[0], ctx.params[1], y,
                                            per_channel(kSavedMean), per_channel(kSavedInvStd),
                                            per_channel(kRunningMean), per_channel(kRunningVar));
  else
    ctx.backend.batch_norm_forward_inference(p_, x, ctx.params[0], ctx.params[1],
                                             per_channel(kRunningMean), per_channel(kRunningVar),
                                             y);
}

void BatchNorm::backward(const StepContext& ctx) {
  auto per_channel = [&](int i) { return ctx.state[i].reshaped({p_.channels}); };
  DLBENCH_CHECK(ctx.input_grads[0].defined(), "batch norm always passes a gradient on");
  ctx.backend.batch_norm_backward(
      p_, flat(ctx.inputs[0], p_.rows), flat(ctx.output_grad(), p_.rows), ctx.params[0],
      per_channel(kSavedMean), per_channel(kSavedInvStd), flat(ctx.input_grads[0], p_.rows),
      ctx.param_grads[0], ctx.param_grads[1], ctx.input_grad_modes[0]);
}

// --- Relu: y = max(x, 0); dx = dy · [y > 0] -----------------------------------------------
void Relu::forward(const StepContext& ctx) {
  ctx.backend.activation_forward(backend::Activation::kRelu, ctx.inputs[0], ctx.output());
}

void Relu::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.activation_backward(backend::Activation::kRelu, ctx.output(), ctx.output_grad(),
                                  ctx.input_grads[0], ctx.input_grad_modes[0]);
}

// --- Pool ----------------------------------------------------------------------------------
Shape Pool::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[0], p_.input_shape(), kind());
  return p_.output_shape();
}

std::vector<StateDecl> Pool::state(backend::Backend& be) const {
  return {{"workspace", be.pool_workspace_bytes(p_), Init::kZeros}};
}

void Pool::forward(const StepContext& ctx) {
  ctx.backend.pool_forward(p_, ctx.inputs[0], ctx.output(), ctx.state[0]);
}

void Pool::backward(const StepContext& ctx) {
  if (!ctx.input_grads[0].defined()) return;
  ctx.backend.pool_backward(p_, ctx.inputs[0], ctx.output(), ctx.output_grad(), ctx.state[0],
                            ctx.input_grads[0], ctx.input_grad_modes[0]);
}

// --- Add: y = a + b; da = db = dy ----------------------------------------------------------
Shape Add::output_shape(std::span<const Shape> inputs) const {
  expect_shape(inputs[1], inputs[0], "add");
  return inputs[0];
}

void Add::forward(const StepContext& ctx) {
  ctx.backend.add(ctx.inputs[0], ctx.inputs[1], ctx.output());
}

void Add::backward(const StepContext& ctx) {
  for (int i = 0; i < 2; ++i)
    pass_gradient(ctx.backend, ctx.output_grad(), ctx.input_grads[i], ctx.input_grad_modes[i]);
}

// --- Linear: y = x Wᵀ + b; dx = dy W; dW = dyᵀ x; db = Σ_rows dy ---------------------------
Shape Linear::output_shape(std::span<const Shape> inputs) const {
  if (inputs[0][0] != p_.m || inputs[0].numel() != p_.m * p_.k)
    throw Error(ErrorKind::kInternal, "linear: input " + inputs[0].str() + " is not [" +
                                          std::to_string(p_.m) + ", " + std::to_string(p_.k) + "]");
  return {p_.m, p_.n};
}

std::vector<ParamDecl> Linear::params() const {
  std::vector<ParamDecl> decls{
      {"weight", {p_.n, p_.k}, Init::kKaimingNormal, p_.k, ParamGroup::kDecayed}};
  if (init_stddev_ > 0) {
    decls[0].init = Init::kNormal;
    decls[0].stddev = init_stddev_;
  }
  if (p_.bias) decls.push_back({"bias", {p_.n}, Init::kZeros, 1, ParamGroup::kNotDecayed});
  return decls;
}

void Linear::forward(const StepContext& ctx) {
  Tensor bias = p_.bias ? ctx.params[1] : Tensor();
  ctx.backend.matmul_forward(p_, flat(ctx.inputs[0], p_.m), ctx.params[0], bias, ctx.output());
}

void Linear::backward(const StepContext& ctx) {
  backend::MatmulParams p = p_;
  if (fused_relu()) {
    // The output gradient has this node as its only reader: it becomes the pre-activation's
    // gradient in place, as the unfused ReLU's backward would have written it.
    ctx.backend.activation_backward(backend::Activation::kRelu, ctx.output(), ctx.output_grad(),
                                    ctx.output_grad(), GradMode::kOverwrite);
    p.activation = backend::Activation::kNone;
  }
  Tensor dbias = p.bias ? ctx.param_grads[1] : Tensor();
  ctx.backend.matmul_backward_weights(p, flat(ctx.inputs[0], p.m), ctx.output_grad(),
                                      ctx.param_grads[0], dbias, one_param_grad_mode(ctx));
  if (ctx.input_grads[0].defined())
    ctx.backend.matmul_backward_data(p, ctx.output_grad(), ctx.params[0],
                                     flat(ctx.input_grads[0], p.m), ctx.input_grad_modes[0]);
}

}  // namespace dlbench::nn
