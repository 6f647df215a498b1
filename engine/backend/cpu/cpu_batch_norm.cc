// Batch norm on oneDNN over x viewed as [rows, channels] (an NHWC tensor's N*H*W rows).
//
// Training:  mean_c = (1/R) sum_r x[r, c],  var_c = (1/R) sum_r (x[r, c] - mean_c)^2  (biased)
//            y = gamma_c (x - mean_c) inv_std_c + beta_c,  inv_std_c = 1 / sqrt(var_c + eps)
//            running_mean = (1 - m) running_mean + m mean
//            running_var  = (1 - m) running_var  + m var R / (R - 1)   (unbiased, as PyTorch)
// Inference: the same normalization with the running statistics.
// Folding:   the inference normalization moved into the weights and bias of the op before it
//            (s_c = gamma_c / sqrt(running_var_c + eps); w'[c, ...] = w s_c;
//            b'_c = beta_c + (b_c - running_mean_c) s_c).
// Backward:  xhat = (x - mean) inv_std
//            dbeta_c = sum_r dy,  dgamma_c = sum_r dy xhat
//            dx = gamma_c inv_std_c (dy - dbeta_c / R - xhat dgamma_c / R)
//
// Tail (p.residual, p.activation): y = relu(bn(x) + residual), one pass over y after oneDNN's
// normalization, writing the ReLU's bits; backward turns dy into the pre-activation's gradient
// with the bits in one pass, hands it to the residual, and runs oneDNN's backward on it. A
// normalized residual (p.residual_norm) is its own batch norm here, run first in forward into
// scratch and last in backward on the gradient the tail handed it: the same ops, in the same
// order, as the unfused graph runs, so the CPU reference does not depend on the fusion.
//
// oneDNN outputs the biased variance, not inv_std; we save inv_std (what backward formulas
// and the CUDA backend use) and rebuild var = 1/inv_std^2 - eps for oneDNN's backward. Only
// var + eps enters its math, and that is rebuilt to within a few ulps.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;

const auto kScaleShift =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

// [rows, channels] described as an NHWC image of one sample, rows tall and one pixel wide:
// the same memory, but oneDNN then sees channels-last ("nspc") data and runs its vectorized
// channels-last kernels; as a 2D "nc" tensor it takes a plain-layout path that strides
// through memory one channel at a time.
memory::desc data_desc(const BatchNormParams& p) {
  return f32_desc({1, p.channels, p.rows, 1}, Tag::nhwc);
}

memory::desc channel_desc(const BatchNormParams& p) {
  return f32_desc({p.channels}, Tag::a);
}

PrimitiveKey bn_key(PrimitiveKind kind, const BatchNormParams& p) {
  // epsilon is part of the primitive; compare its bits, not a rounded value.
  std::int32_t eps_bits = 0;
  static_assert(sizeof(eps_bits) == sizeof(p.epsilon));
  std::memcpy(&eps_bits, &p.epsilon, sizeof(eps_bits));
  return {{static_cast<std::int64_t>(kind), p.rows, p.channels, eps_bits}};
}

dnnl::batch_normalization_forward::primitive_desc training_pd(const BatchNormParams& p,
                                                              const dnnl::engine& engine) {
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_training,
                                                     data_desc(p), p.epsilon, kScaleShift);
  return dnnl::batch_normalization_forward::primitive_desc(desc, engine);
}

// The tail over one word's elements (at most 32): y = act(y + residual), returning the ReLU's
// bits. Called with a constant count for whole words, so the compiler unrolls it into vector
// code (with a variable count, the shifts and the OR chain ran one element at a time, 5x slower).
template <class Count>
std::uint32_t tail_word(float* y, const float* add, bool relu, Count count) {
  if (add)
    for (int j = 0; j < count; ++j) y[j] += add[j];
  if (!relu) return 0;
  std::uint32_t word = 0;
  for (int j = 0; j < count; ++j) word |= static_cast<std::uint32_t>(y[j] > 0.0f) << j;
  for (int j = 0; j < count; ++j) y[j] = std::max(y[j], 0.0f);
  return word;
}

// dz = dy where the word's bits say the ReLU passed, else 0: a select by masking the bits, not a
// branch (the bits are as random as the data: a branch mispredicted half the time).
template <class Count>
void masked_word(const float* g, std::uint32_t word, float* dz, Count count) {
  for (int j = 0; j < count; ++j) {
    const std::uint32_t keep = 0u - ((word >> j) & 1u);
    dz[j] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(g[j]) & keep);
  }
}

using WholeWord = std::integral_constant<int, 32>;

// y = act(y + residual) in place, and the ReLU's bits where a mask is given: one thread per
// 32-element word of the mask, which it writes whole.
void apply_tail(const BatchNormParams& p, const Tensor& residual, const Tensor& mask,
                const Tensor& y) {
  float* out = y.data_as<float>();
  const float* add = p.residual ? residual.data_as<float>() : nullptr;
  const bool relu = p.activation == Activation::kRelu;
  auto* bits = mask.defined() ? mask.data_as<std::uint32_t>() : nullptr;
  const std::int64_t n = p.rows * p.channels, whole = n / 32;
  const auto at = [&](const float* base, std::int64_t w) { return base ? base + w * 32 : nullptr; };
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < whole; ++w) {
    const std::uint32_t word = tail_word(out + w * 32, at(add, w), relu, WholeWord{});
    if (bits) bits[w] = word;
  }
  if (const int rest = static_cast<int>(n - whole * 32); rest > 0) {
    const std::uint32_t word = tail_word(out + whole * 32, at(add, whole), relu, rest);
    if (bits) bits[whole] = word;
  }
}

// The pre-activation's gradient: dy where the ReLU passed, 0 elsewhere (dy itself without one).
const float* tail_gradient(const BatchNormParams& p, const Tensor& dy, const Tensor& mask,
                           float* dz) {
  if (p.activation != Activation::kRelu) return dy.data_as<float>();
  const float* g = dy.data_as<float>();
  const auto* bits = mask.data_as<std::uint32_t>();
  const std::int64_t n = p.rows * p.channels, whole = n / 32;
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < whole; ++w)
    masked_word(g + w * 32, bits[w], dz + w * 32, WholeWord{});
  if (const int rest = static_cast<int>(n - whole * 32); rest > 0)
    masked_word(g + whole * 32, bits[whole], dz + whole * 32, rest);
  return dz;
}

// Scratch slots: 0-3 belong to the ops themselves; a normalized residual's output (forward) or
// output gradient (backward) takes this one, and its input gradient where none is wanted the next.
constexpr int kResidualSlot = 4, kDroppedGradSlot = 5;

// A scratch tensor shaped as x.
Tensor scratch_like(ScratchPool& scratch, int slot, const Tensor& x) {
  return Tensor(scratch.floats(slot, static_cast<std::size_t>(x.numel())), x.shape(), DType::kF32,
                Device::cpu());
}

}  // namespace

void CpuBackend::batch_norm_forward_training_impl(
    const BatchNormParams& p, const Tensor& x, const Tensor& gamma, const Tensor& beta,
    const Tensor& y, const Tensor& saved_mean, const Tensor& saved_inv_std,
    const Tensor& running_mean, const Tensor& running_var, const Tensor& residual,
    const Tensor& relu_mask, const Tensor& statistics, const ResidualNorm& rn) {
  if (p.residual_norm) {
    // The residual's batch norm: these rows and channels (and statistics, if any), no tail.
    const Tensor normalized = scratch_like(scratch_, kResidualSlot, residual);
    batch_norm_forward_training_impl(p.without_tail(), residual, rn.gamma, rn.beta, normalized,
                                     rn.saved_mean, rn.saved_inv_std, rn.running_mean,
                                     rn.running_var, Tensor(), Tensor(), rn.statistics, {});
    BatchNormParams tail = p;
    tail.residual_norm = false;
    batch_norm_forward_training_impl(tail, x, gamma, beta, y, saved_mean, saved_inv_std,
                                     running_mean, running_var, normalized, relu_mask, statistics,
                                     {});
    return;
  }
  const char* op = "batch_norm_forward_training";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const memory::desc data = data_desc(p), channel = channel_desc(p);
  float* var = scratch_.floats(0, p.channels);
  if (p.statistics) {
    // The statistics came with x: normalize with them as inference does with the running ones.
    const float* sums = statistics.data_as<float>();
    float* mean = saved_mean.data_as<float>();
    const double rows = static_cast<double>(p.rows);
    for (std::int64_t c = 0; c < p.channels; ++c) {
      const double m = sums[c] / rows;
      mean[c] = static_cast<float>(m);
      var[c] = static_cast<float>(std::max(sums[p.channels + c] / rows - m * m, 0.0));
    }
    Tensor batch_var(var, {p.channels}, DType::kF32, Device::cpu());
    batch_norm_forward_inference_impl(p.without_tail(), x, gamma, beta, saved_mean, batch_var, y,
                                      Tensor());
  } else {
    try {
      auto& entry = primitives_.get(bn_key(PrimitiveKind::kBatchNormTraining, p), [&] {
        return CachedPrimitive{dnnl::batch_normalization_forward(training_pd(p, engine_)), {}};
      });
      execute(op, entry.primitive,
              {{DNNL_ARG_SRC, mem(data, x)},
               {DNNL_ARG_DST, mem(data, y)},
               {DNNL_ARG_SCALE, mem(channel, gamma)},
               {DNNL_ARG_SHIFT, mem(channel, beta)},
               {DNNL_ARG_MEAN, mem(channel, saved_mean)},
               {DNNL_ARG_VARIANCE, wrap(channel, engine_, var)}});
    } catch (const dnnl::error& e) {
      rethrow_dnnl_error(e, op);
    }
  }
  const float m = p.momentum;
  // Bessel's correction turns the batch's biased variance into the unbiased estimate the
  // running statistics track; a single row has no spread to correct.
  const float unbias =
      p.rows > 1 ? static_cast<float>(p.rows) / static_cast<float>(p.rows - 1) : 1.0f;
  const float* mean = saved_mean.data_as<float>();
  float* inv_std = saved_inv_std.data_as<float>();
  float* run_mean = running_mean.data_as<float>();
  float* run_var = running_var.data_as<float>();
  for (std::int64_t c = 0; c < p.channels; ++c) {
    inv_std[c] = 1.0f / std::sqrt(var[c] + p.epsilon);
    run_mean[c] = (1.0f - m) * run_mean[c] + m * mean[c];
    run_var[c] = (1.0f - m) * run_var[c] + m * var[c] * unbias;
  }
  if (p.has_tail()) apply_tail(p, residual, relu_mask, y);
}

void CpuBackend::batch_norm_forward_inference_impl(const BatchNormParams& p, const Tensor& x,
                                                   const Tensor& gamma, const Tensor& beta,
                                                   const Tensor& running_mean,
                                                   const Tensor& running_var, const Tensor& y,
                                                   const Tensor& residual) {
  const char* op = "batch_norm_forward_inference";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const memory::desc data = data_desc(p), channel = channel_desc(p);
  try {
    auto& entry = primitives_.get(bn_key(PrimitiveKind::kBatchNormInference, p), [&] {
      const dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, data, p.epsilon,
          kScaleShift | dnnl::normalization_flags::use_global_stats);
      return CachedPrimitive{dnnl::batch_normalization_forward(
                                 dnnl::batch_normalization_forward::primitive_desc(desc, engine_)),
                             {}};
    });
    execute(op, entry.primitive,
            {{DNNL_ARG_SRC, mem(data, x)},
             {DNNL_ARG_DST, mem(data, y)},
             {DNNL_ARG_SCALE, mem(channel, gamma)},
             {DNNL_ARG_SHIFT, mem(channel, beta)},
             {DNNL_ARG_MEAN, mem(channel, running_mean)},
             {DNNL_ARG_VARIANCE, mem(channel, running_var)}});
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (p.has_tail()) apply_tail(p, residual, Tensor(), y);
}

void CpuBackend::batch_norm_backward_impl(
    const BatchNormParams& p, const Tensor& x, const Tensor& dy, const Tensor& gamma,
    const Tensor& saved_mean, const Tensor& saved_inv_std, const Tensor& dx, const Tensor& dgamma,
    const Tensor& dbeta, GradMode mode, const Tensor& relu_mask, const Tensor& dresidual,
    GradMode residual_mode, const Tensor& residual, const ResidualNorm& rn) {
  if (p.residual_norm) {
    // The tail hands the pre-activation's gradient to the residual's output, whose batch norm
    // then takes it back to the residual itself.
    const Tensor dnormalized = scratch_like(scratch_, kResidualSlot, residual);
    BatchNormParams tail = p;
    tail.residual_norm = false;
    batch_norm_backward_impl(tail, x, dy, gamma, saved_mean, saved_inv_std, dx, dgamma, dbeta, mode,
                             relu_mask, dnormalized, GradMode::kOverwrite, Tensor(), {});
    const bool wanted = dresidual.defined();
    batch_norm_backward_impl(
        p.without_tail(), residual, dnormalized, rn.gamma, rn.saved_mean, rn.saved_inv_std,
        wanted ? dresidual : scratch_like(scratch_, kDroppedGradSlot, residual), rn.dgamma,
        rn.dbeta, wanted ? residual_mode : GradMode::kOverwrite, Tensor(), Tensor(),
        GradMode::kOverwrite, Tensor(), {});
    return;
  }
  const char* op = "batch_norm_backward";
  require_f32(x, op, "x"), require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  const std::int64_t n = p.rows * p.channels;
  const float* dz = tail_gradient(p, dy, relu_mask, scratch_.floats(3, n));
  if (dresidual.defined()) {
    float* dr = dresidual.data_as<float>();
    if (residual_mode == GradMode::kAccumulate)
      add_into(dr, dz, n);
    else
      std::copy(dz, dz + n, dr);
  }
  const memory::desc data = data_desc(p), channel = channel_desc(p);
  float* var = scratch_.floats(0, p.channels);
  // oneDNN's backward asks for the shift too, though beta does not enter any gradient.
  float* unused_shift = scratch_.floats(2, p.channels);
  const float* inv_std = saved_inv_std.data_as<float>();
  for (std::int64_t c = 0; c < p.channels; ++c) {
    var[c] = 1.0f / (inv_std[c] * inv_std[c]) - p.epsilon;
    unused_shift[c] = 0.0f;
  }
  const bool accumulate = mode == GradMode::kAccumulate;
  float* out = accumulate ? scratch_.floats(1, dx.numel()) : dx.data_as<float>();
  try {
    auto& entry = primitives_.get(bn_key(PrimitiveKind::kBatchNormBackward, p), [&] {
      const dnnl::batch_normalization_backward::desc desc(dnnl::prop_kind::backward, data, data,
                                                          p.epsilon, kScaleShift);
      const dnnl::batch_normalization_backward::primitive_desc pd(desc, engine_,
                                                                  training_pd(p, engine_));
      return CachedPrimitive{dnnl::batch_normalization_backward(pd), {}};
    });
    execute(op, entry.primitive,
            {{DNNL_ARG_SRC, mem(data, x)},
             {DNNL_ARG_DIFF_DST, wrap(data, engine_, const_cast<float*>(dz))},
             {DNNL_ARG_SCALE, mem(channel, gamma)},
             {DNNL_ARG_SHIFT, wrap(channel, engine_, unused_shift)},
             {DNNL_ARG_MEAN, mem(channel, saved_mean)},
             {DNNL_ARG_VARIANCE, wrap(channel, engine_, var)},
             {DNNL_ARG_DIFF_SRC, wrap(data, engine_, out)},
             {DNNL_ARG_DIFF_SCALE, mem(channel, dgamma)},
             {DNNL_ARG_DIFF_SHIFT, mem(channel, dbeta)}});
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
}

void CpuBackend::batch_norm_fold_impl(const BatchNormParams& p, const Tensor& w, const Tensor& bias,
                                      const Tensor& gamma, const Tensor& beta,
                                      const Tensor& running_mean, const Tensor& running_var,
                                      const Tensor& folded_w, const Tensor& folded_bias) {
  const char* op = "batch_norm_fold";
  require_f32(w, op, "w");
  const std::int64_t per_channel = p.channels == 0 ? 0 : w.numel() / p.channels;
  const float* in = w.data_as<float>();
  float* out = folded_w.data_as<float>();
  const float* b = bias.defined() ? bias.data_as<float>() : nullptr;
  for (std::int64_t c = 0; c < p.channels; ++c) {
    const float scale =
        gamma.data_as<float>()[c] / std::sqrt(running_var.data_as<float>()[c] + p.epsilon);
    for (std::int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i) out[i] = in[i] * scale;
    folded_bias.data_as<float>()[c] =
        beta.data_as<float>()[c] + ((b ? b[c] : 0.0f) - running_mean.data_as<float>()[c]) * scale;
  }
}

}  // namespace dlbench::backend::cpu
