// Activations on oneDNN (forward and backward side by side) and elementwise loops.
//
//   ReLU:  y = max(x, 0);  dx = dy where y > 0, else 0 (from y, so x need not be kept:
//          oneDNN's relu_use_dst_for_bwd computes exactly this); with a bias gradient,
//          dbias[c] (+)= sum_r dx[r, c] from the same values
//   add:   y = a + b;      accumulate: dst += src;      multiply: y (+)= a * b
//   GELU:  y = x (1 + tanh u) / 2, u = sqrt(2/pi) (x + 0.044715 x^3);  dx (+)= dy GELU'(x)
//          (the tanh form; loops, double math)
//   tanh:  y = tanh(x);    dx (+)= dy (1 - y^2)              (loops, double math)
// Elementwise ops see tensors as flat arrays: they are dense, and position is all that matters.
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::backend::cpu {
namespace {

using dnnl::memory;

memory::desc flat_desc(const Tensor& t) {
  return f32_desc({t.numel()}, memory::format_tag::a);
}

PrimitiveKey relu_key(PrimitiveKind kind, std::int64_t numel) {
  return {{static_cast<std::int64_t>(kind), numel}};
}

dnnl::eltwise_forward::primitive_desc relu_forward_pd(const memory::desc& md,
                                                      const dnnl::engine& engine) {
  const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training,
                                         dnnl::algorithm::eltwise_relu_use_dst_for_bwd, md, 0.0f);
  return dnnl::eltwise_forward::primitive_desc(desc, engine);
}

// out[c] (+)= sum_r g[r, c] over g [rows, cols], rows in order, in double.
void add_column_sums(const float* g, std::int64_t rows, std::int64_t cols, float* out,
                     GradMode mode) {
  std::vector<double> sums(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) sums[c] += g[r * cols + c];
  for (std::int64_t c = 0; c < cols; ++c)
    out[c] = static_cast<float>(sums[c] + (mode == GradMode::kAccumulate ? out[c] : 0.0));
}

}  // namespace

// GELU's tanh form and its derivative (cpu_backend.h).
double gelu(double x) {
  const double c = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

double gelu_slope(double x) {
  const double c = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  const double t = std::tanh(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x);
}

namespace {

// y[i] = f(x[i]), in double: a smooth activation's forward (GELU, tanh).
template <class F>
void map_smooth(const Tensor& x, const Tensor& y, const char* op, F f) {
  require_f32(x, op, "x"), require_f32(y, op, "y");
  const float* px = x.data_as<float>();
  float* py = y.data_as<float>();
  const std::int64_t n = y.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) py[i] = static_cast<float>(f(double{px[i]}));
}

// dx[i] (+)= dy[i] f'(in[i]), in double, with `derivative` f' of what backward reads (x, or y).
template <class F>
void map_smooth_gradient(const Tensor& in, const Tensor& dy, const Tensor& dx, GradMode mode,
                         const char* op, F derivative) {
  require_f32(in, op, "input"), require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  const float* pin = in.data_as<float>();
  const float* pdy = dy.data_as<float>();
  float* pdx = dx.data_as<float>();
  const std::int64_t n = dx.numel();
  const bool accumulate = mode == GradMode::kAccumulate;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = pdy[i] * derivative(double{pin[i]});
    pdx[i] = static_cast<float>(accumulate ? pdx[i] + d : d);
  }
}

}  // namespace

void CpuBackend::activation_forward_impl(Activation a, const Tensor& x, const Tensor& y) {
  const char* op = "activation_forward";
  require_f32(x, op, "x"), require_f32(y, op, "y");
  if (a == Activation::kNone) {
    if (x.data() != y.data()) std::memmove(y.data(), x.data(), x.bytes());
    return;
  }
  const memory::desc md = flat_desc(x);
  try {
    auto& entry = primitives_.get(relu_key(PrimitiveKind::kReluForward, x.numel()), [&] {
      return CachedPrimitive{dnnl::eltwise_forward(relu_forward_pd(md, engine_)), {}};
    });
    execute(op, entry.primitive, {{DNNL_ARG_SRC, mem(md, x)}, {DNNL_ARG_DST, mem(md, y)}});
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

void CpuBackend::activation_backward_impl(Activation a, const Tensor& y, const Tensor& dy,
                                          const Tensor& dx, GradMode mode, const Tensor& dbias,
                                          GradMode dbias_mode) {
  const char* op = "activation_backward";
  require_f32(y, op, "y"), require_f32(dy, op, "dy"), require_f32(dx, op, "dx");
  if (dbias.defined()) require_f32(dbias, op, "dbias");
  const bool accumulate = mode == GradMode::kAccumulate;
  const std::int64_t channels = dbias.defined() ? dbias.numel() : 1;
  const std::int64_t rows = y.numel() / channels;
  if (a == Activation::kNone) {
    // The gradient is dy itself: summed before dx, which may be dy, changes.
    if (dbias.defined())
      add_column_sums(dy.data_as<float>(), rows, channels, dbias.data_as<float>(), dbias_mode);
    if (accumulate) {
      add_into(dx.data_as<float>(), dy.data_as<float>(), dx.numel());
    } else if (dx.data() != dy.data()) {
      std::memmove(dx.data(), dy.data(), dy.bytes());
    }
    return;
  }
  const memory::desc md = flat_desc(y);
  float* out = accumulate ? scratch_.floats(0, dx.numel()) : dx.data_as<float>();
  try {
    auto& entry = primitives_.get(relu_key(PrimitiveKind::kReluBackward, y.numel()), [&] {
      const dnnl::eltwise_backward::desc desc(dnnl::algorithm::eltwise_relu_use_dst_for_bwd, md, md,
                                              0.0f);
      const dnnl::eltwise_backward::primitive_desc pd(desc, engine_, relu_forward_pd(md, engine_));
      return CachedPrimitive{dnnl::eltwise_backward(pd), {}};
    });
    execute(op, entry.primitive,
            {{DNNL_ARG_DST, mem(md, y)},
             {DNNL_ARG_DIFF_DST, mem(md, dy)},
             {DNNL_ARG_DIFF_SRC, wrap(md, engine_, out)}});
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
  if (dbias.defined()) add_column_sums(out, rows, channels, dbias.data_as<float>(), dbias_mode);
  if (accumulate) add_into(dx.data_as<float>(), out, dx.numel());
}

void CpuBackend::add_impl(const Tensor& a, const Tensor& b, const Tensor& y) {
  const char* op = "add";
  require_f32(a, op, "a"), require_f32(b, op, "b"), require_f32(y, op, "y");
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  float* py = y.data_as<float>();
  const std::int64_t n = y.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) py[i] = pa[i] + pb[i];
}

void CpuBackend::multiply_impl(const Tensor& a, const Tensor& b, const Tensor& y, GradMode mode) {
  const char* op = "multiply";
  require_f32(a, op, "a"), require_f32(b, op, "b"), require_f32(y, op, "y");
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  float* py = y.data_as<float>();
  const std::int64_t n = y.numel();
  if (mode == GradMode::kAccumulate) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) py[i] += pa[i] * pb[i];
  } else {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) py[i] = pa[i] * pb[i];
  }
}

void CpuBackend::gelu_forward_impl(const Tensor& x, const Tensor& y) {
  map_smooth(x, y, "gelu_forward", [](double v) { return gelu(v); });
}

void CpuBackend::gelu_backward_impl(const Tensor& x, const Tensor& dy, const Tensor& dx,
                                    GradMode mode) {
  map_smooth_gradient(x, dy, dx, mode, "gelu_backward", [](double v) { return gelu_slope(v); });
}

void CpuBackend::tanh_forward_impl(const Tensor& x, const Tensor& y) {
  map_smooth(x, y, "tanh_forward", [](double v) { return std::tanh(v); });
}

// From y: tanh's derivative is 1 - y^2.
void CpuBackend::tanh_backward_impl(const Tensor& y, const Tensor& dy, const Tensor& dx,
                                    GradMode mode) {
  map_smooth_gradient(y, dy, dx, mode, "tanh_backward", [](double v) { return 1.0 - v * v; });
}

void CpuBackend::accumulate_impl(const Tensor& src, const Tensor& dst) {
  require_f32(src, "accumulate", "src"), require_f32(dst, "accumulate", "dst");
  add_into(dst.data_as<float>(), src.data_as<float>(), dst.numel());
}

}  // namespace dlbench::backend::cpu
