// Convolution on oneDNN: forward, backward-data and backward-weights side by side, in 2D (NHWC)
// and 3D (NDHWC, the depth one more sum in each formula below).
//
//   y[n, p, q, k]  = b[k] + sum_{r, s, c} x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c] w[k, r, s, c]
//   dx[n, h, w, c] = sum over (p, q, r, s, k) that read x[n, h, w, c] of dy[n, p, q, k] w[k, r, s,
//   c] dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
//   db[k]          = sum_{n, p, q} dy[n, p, q, k]
//
// oneDNN names dims logically (N, C, H, W and O, I, H, W) whatever the memory order; the
// format tag nhwc says that our activations are NHWC. Weights are KRSC ("ohwi") in our memory,
// but oneDNN 2.6 has optimized (jit/brgemm) kernels only for its own blocked weight layouts and
// falls back to a naive reference kernel for ohwi -- about two orders of magnitude slower. So
// the primitives take weights in the layout they choose ("any"), and we reorder: KRSC into it
// before forward and backward-data, and the weight gradient out of it after backward-weights.
// The reorder is a copy of the weights, small next to the convolution itself.
// Its dilation counts the gaps between taps, so ours (1 = dense) becomes dilation - 1.
#include <cstring>
#include <utility>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;

struct ConvDescs {
  memory::desc src, weights, any_weights, bias, dst;
  memory::dims strides, dilates, padding_l, padding_r;
};

ConvDescs conv_descs(const ConvParams& p) {
  ConvDescs d;
  const bool v = p.volumetric();
  const Tag activations = v ? Tag::ndhwc : Tag::nhwc;
  d.src = f32_desc(p.logical_input_dims(), activations);
  d.weights = f32_desc(p.logical_weight_dims(), v ? Tag::odhwi : Tag::ohwi);
  d.any_weights = f32_desc(p.logical_weight_dims(), Tag::any);
  d.bias = f32_desc({p.k}, Tag::a);
  d.dst = f32_desc(p.logical_output_dims(), activations);
  d.strides = p.spatial_strides();
  d.dilates = p.spatial_dilations();
  for (memory::dim& dilation : d.dilates) --dilation;  // oneDNN counts the gaps: 0 is dense
  // oneDNN checks (in + pad_l + pad_r - extent) / stride + 1 == out with floor division, so a
  // symmetric pad is consistent with out_h()/out_w() even when the division is not exact.
  d.padding_l = p.spatial_pads();
  d.padding_r = d.padding_l;
  return d;
}

PrimitiveKey conv_key(PrimitiveKind kind, const ConvParams& p) {
  PrimitiveKey key{{static_cast<std::int64_t>(kind)}};
  const auto fields = p.fields();
  key.fields.insert(key.fields.end(), fields.begin(), fields.end());
  return key;
}

// The forward descriptor, with a residual as oneDNN's sum post-op (dst holds the residual when it
// runs) and a ReLU epilogue as an eltwise post-op after it (both applied after the bias);
// backward primitives need its primitive descriptor as a hint, and take the one without.
dnnl::convolution_forward::primitive_desc forward_pd(const ConvParams& p,
                                                     const dnnl::engine& engine) {
  const ConvDescs d = conv_descs(p);
  dnnl::primitive_attr attr;
  dnnl::post_ops ops;
  if (p.residual) ops.append_sum(1.0f);
  if (p.activation == Activation::kRelu)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  const auto desc =
      p.bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src,
                   d.any_weights, d.bias, d.dst, d.strides, d.dilates, d.padding_l, d.padding_r)
             : dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src,
                   d.any_weights, d.dst, d.strides, d.dilates, d.padding_l, d.padding_r);
  return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
}

// A cache entry for a convolution primitive whose weights (or weight gradient) are in
// `chosen`; the reorder goes from `from` to `to`, one of which is our KRSC layout.
CachedPrimitive conv_entry(dnnl::primitive primitive, const memory::desc& chosen,
                           const memory::desc& from, const memory::desc& to,
                           const dnnl::engine& engine) {
  CachedPrimitive entry{std::move(primitive), {}, chosen, {}};
  if (from != to)
    entry.weights_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
  return entry;
}

}  // namespace

dnnl::memory CpuBackend::primitive_weights(const CachedPrimitive& entry,
                                           const dnnl::memory::desc& user, const Tensor& w) {
  if (!entry.weights_reorder) return mem(user, w);
  const dnnl::memory chosen =
      wrap(entry.weights, engine_,
           scratch_.floats(kWeightsScratch, entry.weights.get_size() / sizeof(float)));
  execute("convolution weights reorder", entry.weights_reorder,
          {{DNNL_ARG_FROM, mem(user, w)}, {DNNL_ARG_TO, chosen}});
  return chosen;
}

void CpuBackend::conv_forward_impl(const ConvParams& p, const Tensor& x, const Tensor& w,
                                   const Tensor& bias, const Tensor& y, const Tensor& residual,
                                   const Tensor&) {
  const char* op = "conv_forward";
  DLBENCH_CHECK(!p.statistics, "the CPU backend does not write a convolution's statistics");
  require_f32(x, op, "x"), require_f32(w, op, "w"), require_f32(y, op, "y");
  if (p.bias) require_f32(bias, op, "bias");
  if (p.residual) {  // the sum post-op adds what dst holds
    require_f32(residual, op, "residual");
    if (residual.data() != y.data()) std::memcpy(y.data(), residual.data(), y.bytes());
  }
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvForward, p), [&] {
      const auto pd = forward_pd(p, engine_);
      return conv_entry(dnnl::convolution_forward(pd), pd.weights_desc(), d.weights,
                        pd.weights_desc(), engine_);
    });
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_WEIGHTS, primitive_weights(entry, d.weights, w)},
              {DNNL_ARG_DST, mem(d.dst, y)}};
    if (p.bias) args.emplace(DNNL_ARG_BIAS, mem(d.bias, bias));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::conv_backward_data_impl(const ConvParams& p, const Tensor& dy, const Tensor& w,
                                         const Tensor& dx, GradMode mode) {
  const char* op = "conv_backward_data";
  require_f32(dy, op, "dy"), require_f32(w, op, "w"), require_f32(dx, op, "dx");
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvBackwardData, p), [&] {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                                       d.any_weights, d.dst, d.strides, d.dilates,
                                                       d.padding_l, d.padding_r);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, engine_,
                                                               forward_pd(p, engine_));
      return conv_entry(dnnl::convolution_backward_data(pd), pd.weights_desc(), d.weights,
                        pd.weights_desc(), engine_);
    });
    // oneDNN overwrites diff_src; to accumulate, compute into scratch and add.
    const bool accumulate = mode == GradMode::kAccumulate;
    float* out = accumulate ? scratch_.floats(0, dx.numel()) : dx.data_as<float>();
    execute(op, entry.primitive,
            {{DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
             {DNNL_ARG_WEIGHTS, primitive_weights(entry, d.weights, w)},
             {DNNL_ARG_DIFF_SRC, wrap(d.src, engine_, out)}});
    if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::conv_backward_weights_impl(const ConvParams& p, const Tensor& x, const Tensor& dy,
                                            const Tensor& dw, const Tensor& dbias, GradMode mode) {
  const char* op = "conv_backward_weights";
  require_f32(x, op, "x"), require_f32(dy, op, "dy"), require_f32(dw, op, "dw");
  if (p.bias) require_f32(dbias, op, "dbias");
  const ConvDescs d = conv_descs(p);
  try {
    auto& entry = primitives_.get(conv_key(PrimitiveKind::kConvBackwardWeights, p), [&] {
      const auto desc = p.bias ? dnnl::convolution_backward_weights::desc(
                                     dnnl::algorithm::convolution_direct, d.src, d.any_weights,
                                     d.bias, d.dst, d.strides, d.dilates, d.padding_l, d.padding_r)
                               : dnnl::convolution_backward_weights::desc(
                                     dnnl::algorithm::convolution_direct, d.src, d.any_weights,
                                     d.dst, d.strides, d.dilates, d.padding_l, d.padding_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, engine_,
                                                                  forward_pd(p, engine_));
      return conv_entry(dnnl::convolution_backward_weights(pd), pd.diff_weights_desc(),
                        pd.diff_weights_desc(), d.weights, engine_);
    });
    const bool accumulate = mode == GradMode::kAccumulate;
    float* dw_out = accumulate ? scratch_.floats(0, dw.numel()) : dw.data_as<float>();
    float* db_out = nullptr;
    // The weight gradient lands in the primitive's layout, then is reordered into KRSC.
    const bool reorder = static_cast<bool>(entry.weights_reorder);
    const dnnl::memory dw_user = wrap(d.weights, engine_, dw_out);
    const dnnl::memory dw_primitive =
        reorder ? wrap(entry.weights, engine_,
                       scratch_.floats(kWeightsScratch, entry.weights.get_size() / sizeof(float)))
                : dw_user;
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
              {DNNL_ARG_DIFF_WEIGHTS, dw_primitive}};
    if (p.bias) {
      db_out = accumulate ? scratch_.floats(1, dbias.numel()) : dbias.data_as<float>();
      args.emplace(DNNL_ARG_DIFF_BIAS, wrap(d.bias, engine_, db_out));
    }
    execute(op, entry.primitive, args);
    if (reorder)
      execute(op, entry.weights_reorder, {{DNNL_ARG_FROM, dw_primitive}, {DNNL_ARG_TO, dw_user}});
    if (accumulate) {
      add_into(dw.data_as<float>(), dw_out, dw.numel());
      if (p.bias) add_into(dbias.data_as<float>(), db_out, dbias.numel());
    }
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

}  // namespace dlbench::backend::cpu
