// Gradient checks by central finite differences, on tiny shapes, in float64: for
// L(v) = sum_i f(v)_i r_i with a random r (r plays dy), dL/dv_j ~ (L(v + h e_j) - L(v - h e_j)) /
// 2h with the *reference* forward as f. Both the reference backward and the backend's backward must
// match it. With h = 1e-6 the truncation error (h^2 f''') and the rounding error (2^-53 |L| / h)
// are both below 1e-9, so the reference is held to 1e-7, and the backend (f32 arithmetic on the
// same f32-representable inputs) to f32 tolerances.
#include <functional>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/ops/op_test_util.h"

namespace dlbench::ops_test {
namespace {

using backend::GradMode;

constexpr double kStep = 1e-6;
constexpr Tolerance kReferenceTolerance{1e-7, 1e-6};
constexpr Tolerance kBackendTolerance{1e-5, 1e-4};

using Forward = std::function<Vec(const Vec&)>;

double weighted_sum(const Vec& y, const Vec& r) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
  return s;
}

Vec numeric_grad(Vec v, const Forward& f, const Vec& r) {
  Vec g(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) {
    const double saved = v[j];
    v[j] = saved + kStep;
    const double up = weighted_sum(f(v), r);
    v[j] = saved - kStep;
    const double down = weighted_sum(f(v), r);
    v[j] = saved;
    g[j] = (up - down) / (2 * kStep);
  }
  return g;
}

// Checks one gradient from both sides: the reference's and the backend's.
void check(const std::string& what, const Vec& numeric, const Vec& reference,
           const std::vector<float>& backend) {
  EXPECT_TRUE(all_close(what + " (reference backward)", reference, numeric, kReferenceTolerance));
  EXPECT_TRUE(all_close(what + " (cpu backend)", backend, numeric, kBackendTolerance));
}

TEST(GradientCheck, Pooling) {
  for (backend::PoolKind kind : {backend::PoolKind::kMax, backend::PoolKind::kAverage}) {
    const bool max = kind == backend::PoolKind::kMax;
    SCOPED_TRACE(max ? "max" : "average");
    backend::PoolParams p;
    p.kind = kind, p.n = 1, p.h = 5, p.w = 6, p.c = 2;
    p.window_h = p.window_w = 3, p.stride_h = p.stride_w = 2, p.pad_h = p.pad_w = 1;
    HostTensor x = random_tensor(p.input_shape(), 101), dy = random_tensor(p.output_shape(), 102);
    const Vec xd = x.as_double(), r = dy.as_double();

    backend::cpu::CpuBackend be;
    HostTensor y(p.output_shape()), dx(p.input_shape());
    HostTensor ws({static_cast<std::int64_t>(be.pool_workspace_bytes(p) / 4 + 1)});
    be.pool_forward(p, x.tensor(), y.tensor(), ws.tensor());
    be.pool_backward(p, x.tensor(), y.tensor(), dy.tensor(), ws.tensor(), dx.tensor(),
                     GradMode::kOverwrite);
    // Random inputs have no ties, and a step of 1e-6 never changes which element wins.
    check("dx",
          numeric_grad(
              xd, [&](const Vec& v) { return ref::pool_forward(p, v); }, r),
          ref::pool_backward(p, xd, r), dx.data);
  }
}

TEST(GradientCheck, Relu) {
  // |x| >= 0.1 (random_tensor), so no finite-difference step crosses the kink at 0.
  HostTensor x = random_tensor({4, 6}, 121), dy = random_tensor({4, 6}, 122);
  const Vec xd = x.as_double(), r = dy.as_double();
  backend::cpu::CpuBackend be;
  HostTensor y({4, 6}), dx({4, 6});
  be.activation_forward(backend::Activation::kRelu, x.tensor(), y.tensor());
  be.activation_backward(backend::Activation::kRelu, y.tensor(), dy.tensor(), dx.tensor(),
                         GradMode::kOverwrite);
  check("dx", numeric_grad(xd, ref::relu_forward, r), ref::relu_backward(ref::relu_forward(xd), r),
        dx.data);
}

TEST(GradientCheck, SoftmaxCrossEntropy) {
  constexpr std::int64_t kRows = 3, kClasses = 5;
  HostTensor logits = random_tensor({kRows, kClasses}, 131);
  std::vector<std::int32_t> labels = {4, 0, 2};
  const Vec zd = logits.as_double();
  backend::cpu::CpuBackend be;
  HostTensor loss({1}), dlogits({kRows, kClasses});
  be.softmax_cross_entropy(logits.tensor(),
                           Tensor(labels.data(), {kRows}, DType::kI32, Device::cpu()),
                           loss.tensor(), dlogits.tensor(), 1.0f);
  auto forward = [&](const Vec& v) {
    return Vec{ref::softmax_cross_entropy(kRows, kClasses, v, labels, 1.0).loss};
  };
  check("dlogits", numeric_grad(zd, forward, {1.0}),
        ref::softmax_cross_entropy(kRows, kClasses, zd, labels, 1.0).dlogits, dlogits.data);
}

TEST(GradientCheck, SigmoidBinaryCrossEntropy) {
  constexpr std::int64_t kRows = 5;
  HostTensor logits = random_tensor({kRows, 1}, 141), targets({kRows, 1});
  targets.data = {1, 0, 0, 1, 1};
  const Vec xd = logits.as_double(), td = targets.as_double();
  backend::cpu::CpuBackend be;
  HostTensor loss({1}), dlogits({kRows, 1});
  be.sigmoid_binary_cross_entropy(logits.tensor(), targets.tensor(), loss.tensor(),
                                  dlogits.tensor(), 1.0f);
  auto forward = [&](const Vec& v) {
    return Vec{ref::sigmoid_binary_cross_entropy(v, td, 1.0).loss};
  };
  check("dlogits", numeric_grad(xd, forward, {1.0}),
        ref::sigmoid_binary_cross_entropy(xd, td, 1.0).dlogits, dlogits.data);
}

// The table's gradient by differences on the table, with a repeated id and an unused row.
TEST(GradientCheck, EmbeddingTable) {
  constexpr std::int64_t kVocab = 4, kDim = 3;
  std::vector<std::int32_t> ids = {2, 0, 2, 3, 2};
  const auto n = static_cast<std::int64_t>(ids.size());
  HostTensor table = random_tensor({kVocab, kDim}, 151), dy = random_tensor({n, kDim}, 152);
  backend::cpu::CpuBackend be;
  HostTensor dtable({kVocab, kDim});
  std::vector<std::int32_t> touched(kVocab);
  be.embedding_backward(
      dy.tensor(), Tensor(ids.data(), {n}, DType::kI32, Device::cpu()), Tensor(), dtable.tensor(),
      Tensor(touched.data(), {kVocab}, DType::kI32, Device::cpu()), GradMode::kOverwrite);
  auto forward = [&](const Vec& v) { return ref::embedding_forward(kDim, v, ids); };
  check("dtable", numeric_grad(table.as_double(), forward, dy.as_double()),
        ref::embedding_backward(kVocab, kDim, dy.as_double(), ids), dtable.data);
}

}  // namespace
}  // namespace dlbench::ops_test
