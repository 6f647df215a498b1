// Matmul as oneDNN's inner product, forward and backward side by side.
//
//   y[m, n]  = act(sum_k x[m, k] w[n, k] + b[n])   (act: none or ReLU, fused as a post-op; or
//              GELU, a loop after the product that also keeps the pre-activation where asked)
//   dx[m, k] = sum_n dy[m, n] w[n, k]            (times GELU'(x_pre[m, k]) with gelu_gradient)
//   dw[n, k] = sum_m dy[m, n] x[m, k],  db[n] = sum_m dy[m, n]
//
// The weights are [out, in] row-major, which is oneDNN's "oi" format; x and y are "nc".
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;

struct MatmulDescs {
  memory::desc src, weights, bias, dst;
};

MatmulDescs matmul_descs(const MatmulParams& p) {
  return {f32_desc({p.m, p.k}, Tag::nc), f32_desc({p.n, p.k}, Tag::oi), f32_desc({p.n}, Tag::a),
          f32_desc({p.m, p.n}, Tag::nc)};
}

PrimitiveKey matmul_key(PrimitiveKind kind, const MatmulParams& p) {
  return {{static_cast<std::int64_t>(kind), p.m, p.k, p.n, p.bias ? 1 : 0,
           static_cast<std::int64_t>(p.activation)}};
}

// Backward primitives take the forward one as a hint; the activation does not change it.
dnnl::inner_product_forward::primitive_desc forward_pd(const MatmulParams& p,
                                                       const dnnl::engine& engine) {
  const MatmulDescs d = matmul_descs(p);
  const auto desc = p.bias ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training,
                                                               d.src, d.weights, d.bias, d.dst)
                           : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training,
                                                               d.src, d.weights, d.dst);
  dnnl::primitive_attr attr;
  if (p.activation == Activation::kRelu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return dnnl::inner_product_forward::primitive_desc(desc, attr, engine);
}

}  // namespace

void CpuBackend::matmul_forward_impl(const MatmulParams& p, const Tensor& x, const Tensor& w,
                                     const Tensor& bias, const Tensor& y, const Tensor& pre) {
  const char* op = "matmul_forward";
  require_f32(x, op, "x"), require_f32(w, op, "w"), require_f32(y, op, "y");
  if (p.bias) require_f32(bias, op, "bias");
  const MatmulDescs d = matmul_descs(p);
  try {
    auto& entry = primitives_.get(matmul_key(PrimitiveKind::kMatmulForward, p), [&] {
      return CachedPrimitive{dnnl::inner_product_forward(forward_pd(p, engine_)), {}};
    });
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_WEIGHTS, mem(d.weights, w)},
              {DNNL_ARG_DST, mem(d.dst, y)}};
    if (p.bias) args.emplace(DNNL_ARG_BIAS, mem(d.bias, bias));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (!p.gelu) return;
  float* py = y.data_as<float>();
  float* keep = nullptr;
  if (pre.defined()) require_f32(pre, op, "pre"), keep = pre.data_as<float>();
  const std::int64_t n = y.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    if (keep != nullptr) keep[i] = py[i];
    py[i] = static_cast<float>(gelu(double{py[i]}));
  }
}

void CpuBackend::matmul_backward_data_impl(const MatmulParams& p, const Tensor& dy, const Tensor& w,
                                           const Tensor& dx, GradMode mode,
                                           const Tensor& gelu_input) {
  const char* op = "matmul_backward_data";
  require_f32(dy, op, "dy"), require_f32(w, op, "w"), require_f32(dx, op, "dx");
  const MatmulDescs d = matmul_descs(p);
  const bool accumulate = mode == GradMode::kAccumulate;
  float* out = accumulate ? scratch_.floats(0, dx.numel()) : dx.data_as<float>();
  try {
    auto& entry = primitives_.get(matmul_key(PrimitiveKind::kMatmulBackwardData, p), [&] {
      const dnnl::inner_product_backward_data::desc desc(d.src, d.weights, d.dst);
      const dnnl::inner_product_backward_data::primitive_desc pd(desc, engine_,
                                                                 forward_pd(p, engine_));
      return CachedPrimitive{dnnl::inner_product_backward_data(pd), {}};
    });
    execute(op, entry.primitive,
            {{DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
             {DNNL_ARG_WEIGHTS, mem(d.weights, w)},
             {DNNL_ARG_DIFF_SRC, wrap(d.src, engine_, out)}});
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
  if (p.gelu_gradient) {  // the DGELU epilogue: the door allows overwriting only
    require_f32(gelu_input, op, "gelu_input");
    const float* pre = gelu_input.data_as<float>();
    const std::int64_t n = dx.numel();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(double{out[i]} * gelu_slope(double{pre[i]}));
  }
}

void CpuBackend::matmul_backward_weights_impl(const MatmulParams& p, const Tensor& x,
                                              const Tensor& dy, const Tensor& dw,
                                              const Tensor& dbias, GradMode mode) {
  const char* op = "matmul_backward_weights";
  require_f32(x, op, "x"), require_f32(dy, op, "dy"), require_f32(dw, op, "dw");
  if (p.bias) require_f32(dbias, op, "dbias");
  const MatmulDescs d = matmul_descs(p);
  const bool accumulate = mode == GradMode::kAccumulate;
  float* dw_out = accumulate ? scratch_.floats(0, dw.numel()) : dw.data_as<float>();
  float* db_out = nullptr;
  if (p.bias) db_out = accumulate ? scratch_.floats(1, dbias.numel()) : dbias.data_as<float>();
  try {
    auto& entry = primitives_.get(matmul_key(PrimitiveKind::kMatmulBackwardWeights, p), [&] {
      const auto desc =
          p.bias ? dnnl::inner_product_backward_weights::desc(d.src, d.weights, d.bias, d.dst)
                 : dnnl::inner_product_backward_weights::desc(d.src, d.weights, d.dst);
      const dnnl::inner_product_backward_weights::primitive_desc pd(desc, engine_,
                                                                    forward_pd(p, engine_));
      return CachedPrimitive{dnnl::inner_product_backward_weights(pd), {}};
    });
    Args args{{DNNL_ARG_SRC, mem(d.src, x)},
              {DNNL_ARG_DIFF_DST, mem(d.dst, dy)},
              {DNNL_ARG_DIFF_WEIGHTS, wrap(d.weights, engine_, dw_out)}};
    if (p.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(d.bias, engine_, db_out));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (accumulate) {
    add_into(dw.data_as<float>(), dw_out, dw.numel());
    if (p.bias) add_into(dbias.data_as<float>(), db_out, dbias.numel());
  }
}

}  // namespace dlbench::backend::cpu
