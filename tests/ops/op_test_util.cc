#include "tests/ops/op_test_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace dlbench::ops_test {

HostTensor random_tensor(Shape shape, std::uint64_t seed) {
  HostTensor t(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  for (float& v : t.data) v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return t;
}

HostTensor random_positive(Shape shape, std::uint64_t seed, float lo, float hi) {
  HostTensor t(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.data) v = dist(rng);
  return t;
}

HostTensor poisoned(Shape shape) {
  HostTensor t(shape);
  for (float& v : t.data) v = std::numeric_limits<float>::quiet_NaN();
  return t;
}

Tolerance sum_tolerance(std::int64_t terms) {
  const double unit_roundoff = std::ldexp(1.0, -24);
  return {unit_roundoff * static_cast<double>(std::max<std::int64_t>(terms, 16)), 1e-4};
}

namespace {

template <class Got>
::testing::AssertionResult compare(const std::string& what, const Got& got, const Vec& ref,
                                   Tolerance tol) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure()
           << what << ": size " << got.size() << " vs reference " << ref.size();
  constexpr int kShown = 5;
  std::ostringstream first;
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    const double err = std::fabs(g - ref[i]);
    const double allowed = tol.atol + tol.rtol * std::fabs(ref[i]);
    if (!(err <= allowed)) {  // written so that NaN fails
      if (bad < kShown)
        first << "\n  [" << i << "] got " << g << " ref " << ref[i] << " |err| " << err
              << " allowed " << allowed;
      ++bad;
      worst = std::isnan(err) ? err : std::max(worst, err);
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": " << bad << " of " << ref.size() << " elements off (atol " << tol.atol
         << ", rtol " << tol.rtol << ", worst |err| " << worst << "); first:" << first.str();
}

}  // namespace

::testing::AssertionResult all_close(const std::string& what, const std::vector<float>& got,
                                     const Vec& ref, Tolerance tol) {
  return compare(what, got, ref, tol);
}

::testing::AssertionResult all_close(const std::string& what, const Vec& got, const Vec& ref,
                                     Tolerance tol) {
  return compare(what, got, ref, tol);
}

Vec expected_grad(backend::GradMode mode, const HostTensor& before, const Vec& grad) {
  if (mode == backend::GradMode::kOverwrite) return grad;
  Vec out(grad.size());
  for (std::size_t i = 0; i < grad.size(); ++i) out[i] = before.data[i] + grad[i];
  return out;
}

HostTensor initial_grad(backend::GradMode mode, Shape shape, std::uint64_t seed) {
  return mode == backend::GradMode::kAccumulate ? random_tensor(shape, seed) : poisoned(shape);
}

const char* mode_name(backend::GradMode mode) {
  return mode == backend::GradMode::kAccumulate ? "accumulate" : "overwrite";
}

Vec round_to_float(const Vec& v) {
  Vec out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

std::vector<float> to_float(const Vec& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace dlbench::ops_test
