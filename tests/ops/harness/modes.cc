#include "tests/ops/harness/modes.h"

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "engine/backend/cpu/cpu_backend.h"

namespace dlbench::op_harness {

bool is_conv(backend::OpKind kind) {
  return kind == backend::OpKind::kConvForward || kind == backend::OpKind::kConvBackwardData ||
         kind == backend::OpKind::kConvBackwardWeights;
}

namespace {

bool written(const HostTensor& t) {
  return t.role == Role::kOut || t.role == Role::kInOut;
}

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The checks no tolerance may soften: elements that must stay as they were, and a second run
// on the same inputs that must write the same bits.
void expect_bitwise(const OpCase& c, backend::Backend& be, const std::vector<HostTensor>& host,
                    const Precision& p, const DeviceTensors& dev) {
  for (const Unchanged& u : c.unchanged()) {
    const std::vector<float> got = dev.download(u.tensor);
    const std::vector<float>& before = host[u.tensor].data;
    for (std::size_t e : u.elements) {
      if (same_bits(got[e], before[e])) continue;
      ADD_FAILURE() << host[u.tensor].name << "[" << e << "] was " << before[e] << ", is " << got[e]
                    << ": the op changed an element it must leave alone";
      break;  // the first is enough to say which
    }
  }
  if (!c.repeatable()) return;
  DeviceTensors again(be, host, p);
  c.run(be, p, again.tensors());
  be.synchronize();
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!written(host[i])) continue;
    const std::vector<float> first = dev.download(i), second = again.download(i);
    const auto [a, b] =
        std::mismatch(first.begin(), first.end(), second.begin(), second.end(), same_bits);
    EXPECT_TRUE(a == first.end()) << host[i].name << "[" << (a - first.begin()) << "] is " << *a
                                  << " in one run and " << *b << " in the next: not repeatable";
  }
}

}  // namespace

void run_test_mode(const OpCase& c, const Variant& v, const Precision& p) {
  // The backend first: without a GPU every CUDA case says so, which CTest reads as a skip.
  std::string why_not;
  std::unique_ptr<backend::Backend> be = v.make(&why_not);
  if (!be) GTEST_SKIP() << why_not;
  const backend::Support support = v.supports(c.kind(), c.op_params(p), p.dtype);
  if (!support) GTEST_SKIP() << support.reason;

  std::vector<HostTensor> host = c.tensors(*be);
  round_inputs(host, p);
  DeviceTensors dev(*be, host, p);
  c.run(*be, p, dev.tensors());
  be->synchronize();
  expect_bitwise(c, *be, host, p, dev);

  if (v.is_cpu) {
    for (const Check& check : c.reference(host)) {
      EXPECT_TRUE(all_close(host[check.tensor].name, dev.download(check.tensor), check.expected,
                            check.tol));
    }
    return;
  }
  if (c.against_reference()) {
    for (const Check& check : c.reference(host)) {
      EXPECT_TRUE(close_reporting(host[check.tensor].name, dev.download(check.tensor),
                                  std::vector<float>(check.expected.begin(), check.expected.end()),
                                  c.against_cpu(p, check.tensor)));
    }
    return;
  }
  // The CPU computes in f32 on the same rounded values, in the same math mode.
  backend::cpu::CpuBackend cpu;
  const Precision cpu_precision{DType::kF32, p.math, p.name};
  std::vector<HostTensor> cpu_host = c.tensors(cpu);
  round_inputs(cpu_host, p);
  DeviceTensors on_cpu(cpu, cpu_host, cpu_precision);
  c.run(cpu, cpu_precision, on_cpu.tensors());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!written(host[i])) continue;
    std::vector<float> expected = on_cpu.download(i);
    if (c.round_cpu_result() && host[i].kind == Kind::kCompute)
      for (float& v : expected) v = round_to(p.dtype, v);
    EXPECT_TRUE(close_reporting(host[i].name, dev.download(i), expected, c.against_cpu(p, i)));
  }
  if (is_conv(c.kind()) && v.conv_after) v.conv_after(*be);
}

namespace {

// With h = 1e-6 the truncation error (h^2 f''') and the rounding error (2^-53 |L| / h) are
// both below 1e-9, so the reference is held to 1e-7, and the backend (f32 arithmetic on the
// same f32-representable inputs) to f32 tolerances.
constexpr double kStep = 1e-6;
constexpr Tolerance kReferenceTolerance{1e-7, 1e-6};
constexpr Tolerance kBackendTolerance{1e-5, 1e-4};

double weighted_sum(const Vec& y, const Vec* r) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * (r ? (*r)[i] : 1.0);
  return s;
}

Vec numeric_grad(std::vector<Vec> t, std::size_t wrt, const GradCase& c) {
  const Vec* r = c.weight >= 0 ? &t[static_cast<std::size_t>(c.weight)] : nullptr;
  Vec& v = t[wrt];
  Vec g(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) {
    const double saved = v[j];
    v[j] = saved + kStep;
    const double up = weighted_sum(c.forward(t), r);
    v[j] = saved - kStep;
    const double down = weighted_sum(c.forward(t), r);
    v[j] = saved;
    g[j] = (up - down) / (2 * kStep);
  }
  return g;
}

}  // namespace

void run_grad_mode(const GradCase& c, const Variant& v) {
  std::string why_not;
  std::unique_ptr<backend::Backend> be = v.make(&why_not);
  if (!be) GTEST_SKIP() << why_not;
  const backend::Support support = v.supports(c.kind, c.op_params, DType::kF32);
  if (!support) GTEST_SKIP() << support.reason;

  DeviceTensors dev(*be, c.tensors, kF32);
  c.backward(*be, dev.tensors());
  be->synchronize();
  std::vector<Vec> values;
  for (const HostTensor& t : c.tensors) values.push_back(t.as_double());
  const std::vector<Vec> reference = c.reference_backward(values);
  for (std::size_t k = 0; k < c.wrt.size(); ++k) {
    const auto [input, gradient] = c.wrt[k];
    const Vec numeric = numeric_grad(values, input, c);
    const std::string& what = c.tensors[gradient].name;
    EXPECT_TRUE(
        all_close(what + " (reference backward)", reference[k], numeric, kReferenceTolerance));
    EXPECT_TRUE(all_close(what + " (" + v.name + " backend)", dev.download(gradient), numeric,
                          kBackendTolerance));
  }
}

}  // namespace dlbench::op_harness
