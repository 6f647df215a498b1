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
