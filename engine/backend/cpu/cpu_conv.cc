// Convolution on oneDNN: forward, backward-data and backward-weights side by side.
//
//   y[n, p, q, k]  = b[k] + sum_{r, s, c} x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c] w[k, r, s, c]
//   dx[n, h, w, c] = sum over (p, q, r, s, k) that read x[n, h, w, c] of dy[n, p, q, k] w[k, r, s,
//   c] dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
//   db[k]          = sum_{n, p, q} dy[n, p, q, k]
//
// oneDNN names dims logically (N, C, H, W and O, I, H, W) whatever the memory order; the
// format tags nhwc and ohwi say that our memory is NHWC activations and KRSC weights.
// Its dilation counts the gaps between taps, so ours (1 = dense) becomes dilation - 1.
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;

struct ConvDescs {
  memory::desc src, weights, bias, dst;
  memory::dims strides, dilates, padding_l, padding_r;
};

ConvDescs conv_descs(const Conv2dParams& p) {
  ConvDescs d;
  d.src = f32_desc({p.n, p.c, p.h, p.w}, Tag::nhwc);
  d.weights = f32_desc({p.k, p.c, p.r, p.s}, Tag::ohwi);
  d.bias = f32_desc({p.k}, Tag::a);
  d.dst = f32_desc({p.n, p.k, p.out_h(), p.out_w()}, Tag::nhwc);
  d.strides = {p.stride_h, p.stride_w};
  d.dilates = {p.dilation_h - 1, p.dilation_w - 1};
  // oneDNN checks (in + pad_l + pad_r - extent) / stride + 1 == out with floor division, so a
  // symmetric pad is consistent with out_h()/out_w() even when the division is not exact.
  d.padding_l = {p.pad_h, p.pad_w};
  d.padding_r = {p.pad_h, p.pad_w};
  return d;
}

PrimitiveKey conv_key(PrimitiveKind kind, const Conv2dParams& p, std::int64_t extra = 0) {
  return {{static_cast<std::int64_t>(kind), p.n, p.h, p.w, p.c, p.k, p.r, p.s, p.stride_h,
           p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w, p.bias ? 1 : 0, extra}};
}

// The forward descriptor; backward primitives need its primitive descriptor as a hint.
dnnl::convolution_forward::primitive_desc forward_pd(const Conv2dParams& p,
                                                     const dnnl::engine& engine,
                                                     const dnnl::primitive_attr& attr = {}) {
  const ConvDescs d = conv_descs(p);
  const auto desc =
      p.bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src,
                   d.weights, d.bias, d.dst, d.strides, d.dilates, d.padding_l, d.padding_r)
             : dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src,
                   d.weights, d.dst, d.strides, d.dilates, d.padding_l, d.padding_r);
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
}

}  // namespace

void CpuBackend::conv2d_forward_impl(const Conv2dParams& p, const Tensor& x, const Tensor& w,
                                     const Tensor& bias, const Tensor& y) {
  const char* op = "conv2d_forward";
  require_f32(x, op, "x"), require_f32(w, op, "w"), require_f32(y, op, "y");
  if (p.bias) require_f32(bias, op, "bias");
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvForward, p), [&] {
      return CachedPrimitive{dnnl::convolution_forward(forward_pd(p, engine_)), {}};
    });
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_WEIGHTS, mem(d.weights, w)},
              {DNNL_ARG_DST, mem(d.dst, y)}};
    if (p.bias) args.emplace(DNNL_ARG_BIAS, mem(d.bias, bias));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::conv2d_backward_data_impl(const Conv2dParams& p, const Tensor& dy, const Tensor& w,
                                           const Tensor& dx, GradMode mode) {
  const char* op = "conv2d_backward_data";
  require_f32(dy, op, "dy"), require_f32(w, op, "w"), require_f32(dx, op, "dx");
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvBackwardData, p), [&] {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                                       d.weights, d.dst, d.strides, d.dilates,
                                                       d.padding_l, d.padding_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, engine_,
                                                               forward_pd(p, engine_));
      return CachedPrimitive{dnnl::convolution_backward_data(pd), {}};
    });
    // oneDNN overwrites diff_src; to accumulate, compute into scratch and add.
    const bool accumulate = mode == GradMode::kAccumulate;
    float* out = accumulate ? scratch_.floats(0, dx.numel()) : dx.data_as<float>();
    execute(op, entry.primitive,
            {{DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
             {DNNL_ARG_WEIGHTS, mem(d.weights, w)},
             {DNNL_ARG_DIFF_SRC, wrap(d.src, engine_, out)}});
    if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::conv2d_backward_weights_impl(const Conv2dParams& p, const Tensor& x,
                                              const Tensor& dy, const Tensor& dw,
                                              const Tensor& dbias, GradMode mode) {
  const char* op = "conv2d_backward_weights";
  require_f32(x, op, "x"), require_f32(dy, op, "dy"), require_f32(dw, op, "dw");
  if (p.bias) require_f32(dbias, op, "dbias");
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvBackwardWeights, p), [&] {
      const auto desc = p.bias ? dnnl::convolution_backward_weights::desc(
                                     dnnl::algorithm::convolution_direct, d.src, d.weights, d.bias,
                                     d.dst, d.strides, d.dilates, d.padding_l, d.padding_r)
                               : dnnl::convolution_backward_weights::desc(
                                     dnnl::algorithm::convolution_direct, d.src, d.weights, d.dst,
                                     d.strides, d.dilates, d.padding_l, d.padding_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, engine_,
                                                                  forward_pd(p, engine_));
      return CachedPrimitive{dnnl::convolution_backward_weights(pd), {}};
    });
    const bool accumulate = mode == GradMode::kAccumulate;
    float* dw_out = accumulate ? scratch_.floats(0, dw.numel()) : dw.data_as<float>();
    float* db_out = nullptr;
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
              {DNNL_ARG_DIFF_WEIGHTS, wrap(d.weights, engine_, dw_out)}};
    if (p.bias) {
      db_out = accumulate ? scratch_.floats(1, dbias.numel()) : dbias.data_as<float>();
      args.emplace(DNNL_ARG_DIFF_BIAS, wrap(d.bias, engine_, db_out));
    }
    execute(op, entry.primitive, args);
    if (accumulate) {
      add_into(dw.data_as<float>(), dw_out, dw.numel());
      if (p.bias) add_into(dbias.data_as<float>(), db_out, dbias.numel());
    }
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

}  // namespace dlbench::backend::cpu
