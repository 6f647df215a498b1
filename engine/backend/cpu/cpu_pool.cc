// Pooling on oneDNN, forward and backward side by side.
//
// NHWC, or NDHWC in 3D.
//
//   max:     y[n, p, q, c] = max over the window of x (padding never wins);
//            dx gets dy at the position that won (oneDNN records it in the workspace)
//   average: y = (1/count) sum over the window's in-bounds elements, count excluding padding;
//            dx[h, w] = sum over windows containing (h, w) of dy / count
// Global average pooling is average pooling whose window is the whole image.
#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;

struct PoolDescs {
  memory::desc src, dst;
  memory::dims strides, kernel, padding_l, padding_r;
  dnnl::algorithm algorithm;
};

PoolDescs pool_descs(const PoolParams& p) {
  PoolDescs d;
  const Tag activations = p.volumetric() ? Tag::ndhwc : Tag::nhwc;
  d.src = f32_desc(p.logical_input_dims(), activations);
  d.dst = f32_desc(p.logical_output_dims(), activations);
  d.strides = p.spatial_strides();
  d.kernel = p.spatial_windows();
  // Symmetric padding: oneDNN checks the output size with floor division, as out_h() does.
  d.padding_l = p.spatial_pads();
  d.padding_r = d.padding_l;
  d.algorithm = p.kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                         : dnnl::algorithm::pooling_avg_exclude_padding;
  return d;
}

PrimitiveKey pool_key(PrimitiveKind kind, const PoolParams& p) {
  PrimitiveKey key{{static_cast<std::int64_t>(kind)}};
  const auto fields = p.fields();
  key.fields.insert(key.fields.end(), fields.begin(), fields.end());
  return key;
}

dnnl::pooling_forward::primitive_desc forward_pd(const PoolParams& p, const dnnl::engine& engine) {
  const PoolDescs d = pool_descs(p);
  // forward_training so that max pooling records where each maximum came from.
  const dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_training, d.algorithm, d.src,
                                         d.dst, d.strides, d.kernel, d.padding_l, d.padding_r);
  return dnnl::pooling_forward::primitive_desc(desc, engine);
}

}  // namespace

CachedPrimitive& CpuBackend::pool_primitive(const PoolParams& p, PrimitiveKind kind) const {
  return primitives_.get(pool_key(kind, p), [&] {
    const auto fwd = forward_pd(p, engine_);
    if (kind == PrimitiveKind::kPoolForward)
      return CachedPrimitive{dnnl::pooling_forward(fwd), fwd.workspace_desc()};
    const PoolDescs d = pool_descs(p);
    const dnnl::pooling_backward::desc desc(d.algorithm, d.src, d.dst, d.strides, d.kernel,
                                            d.padding_l, d.padding_r);
    const dnnl::pooling_backward::primitive_desc pd(desc, engine_, fwd);
    return CachedPrimitive{dnnl::pooling_backward(pd), pd.workspace_desc()};
  });
}

std::size_t CpuBackend::pool_workspace_bytes(const PoolParams& p) const {
  try {
    return pool_primitive(p, PrimitiveKind::kPoolForward).workspace.get_size();
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, "pool_workspace_bytes");
  }
}

void CpuBackend::pool_forward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                   const Tensor& workspace) {
  const char* op = "pool_forward";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const PoolDescs d = pool_descs(p);
  try {
    const CachedPrimitive& entry = pool_primitive(p, PrimitiveKind::kPoolForward);
    Args args{{DNNL_ARG_SRC, mem(d.src, x)}, {DNNL_ARG_DST, mem(d.dst, y)}};
    if (entry.workspace.get_size() > 0)
      args.emplace(DNNL_ARG_WORKSPACE, mem(entry.workspace, workspace));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::pool_backward_impl(const PoolParams& p, const Tensor& x, const Tensor& y,
                                    const Tensor& dy, const Tensor& workspace, const Tensor& dx,
                                    GradMode mode) {
  const char* op = "pool_backward";
  // oneDNN's backward needs only dy and (for max) the workspace; x and y are in the
  // interface for backends that find the maximum again instead of recording it.
  (void)x, (void)y;
  require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  const PoolDescs d = pool_descs(p);
  const bool accumulate = mode == GradMode::kAccumulate;
  float* out = accumulate ? scratch_.floats(0, dx.numel()) : dx.data_as<float>();
  try {
    const CachedPrimitive& entry = pool_primitive(p, PrimitiveKind::kPoolBackward);
    Args args{{DNNL_ARG_DIFF_DST, mem(d.dst, dy)}, {DNNL_ARG_DIFF_SRC, wrap(d.src, engine_, out)}};
    if (entry.workspace.get_size() > 0)
      args.emplace(DNNL_ARG_WORKSPACE, mem(entry.workspace, workspace));
    execute(op, entry.primitive, args);
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
}

}  // namespace dlbench::backend::cpu
