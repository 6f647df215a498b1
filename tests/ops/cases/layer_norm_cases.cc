// Layer norm forward and backward (both gradient modes for dx): the CPU backend against the
// float64 reference (whose backward goes through each row's Jacobian term by term), every other
// backend against the CPU in every float dtype; and finite differences of the forward.
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::LayerNormParams;
using backend::OpKind;

// x's shape; the last dimension is the normalized width. Small and odd widths, BERT's 768 and
// 1024 (more than a warp's lanes many times over), rows in many chunks of the parameter
// gradients' column sums (9,000 rows: 36 chunks, so each lane adds more than one), and a
// [batch, sequence, hidden] activation.
const std::vector<Shape> kShapes = {{6, 8},    {5, 13},     {3, 768},  {64, 33},
                                    {1000, 3}, {300, 1024}, {9000, 5}, {2, 5, 16}};

LayerNormParams params_of(const Shape& s) {
  LayerNormParams p;
  p.width = s[s.rank() - 1];
  p.rows = s.numel() / p.width;
  p.epsilon = 1e-5f;
  return p;
}

std::string shape_name(const Shape& s) {
  std::ostringstream o;
  for (int i = 0; i < s.rank(); ++i) o << (i ? "x" : "") << s[i];
  return o.str();
}

// Normalized values, and the gradients through them, reach a few units (a few sigma times
// gamma <= 1.5, plus beta).
constexpr double kMagnitude = 4.0;

// How far f32 rounding in a row's statistics can move its outputs: (x - m) s is off by about
// an ulp of |x| times s, so a row whose values lie close together (a small variance, a large
// s, as happens among 1,000 rows of three values) magnifies it. The largest |x| s * 1.5 (the
// largest gamma) over the rows, and at least kMagnitude.
double conditioning(const LayerNormParams& p, const HostTensor& x) {
  const ref::LayerNormForward f = ref::layer_norm_forward(
      p, x.as_double(), Vec(static_cast<std::size_t>(p.width), 1.0), Vec(p.width, 0.0));
  double worst = kMagnitude;
  for (std::int64_t r = 0; r < p.rows; ++r)
    for (std::int64_t c = 0; c < p.width; ++c)
      worst = std::max(worst, std::abs(x.data[r * p.width + c]) * f.inv_std[r] * 1.5);
  return worst;
}

// Against the CPU, which sums in double (the CUDA kernels in f32): per-row statistics are sums
// over the width, the parameters' gradients sums over the rows, f32 outputs whatever the
// precision (the inputs are the same rounded values on both sides). Per-element outputs in f32
// carry a row's sums' error, scaled by the rows' conditioning; in f16 and bf16 the rounding of the
// output dominates.
Tolerance ln_tolerance(const Precision& prec, std::int64_t terms, bool per_element,
                       double magnitude = kMagnitude) {
  if (per_element && prec.dtype != DType::kF32) return sum_tolerance(prec, 1, kMagnitude);
  return sum_tolerance(kF32, terms, magnitude);
}

// Random x, except that a row whose values lie so close together that conditioning() would
// pass 8 gets a ramp from -1 to 1 across its columns added: the cases check the op, and such a
// row would loosen the tolerance of every element of its case.
HostTensor ln_input(const LayerNormParams& p, const Shape& s, std::uint64_t seed) {
  HostTensor x = input("x", s, seed);
  const ref::LayerNormForward f = ref::layer_norm_forward(
      p, x.as_double(), Vec(static_cast<std::size_t>(p.width), 1.0), Vec(p.width, 0.0));
  for (std::int64_t r = 0; r < p.rows; ++r) {
    float* row = x.data.data() + r * p.width;
    double largest = 0;
    for (std::int64_t c = 0; c < p.width; ++c)
      largest = std::max<double>(largest, std::abs(row[c]));
    if (largest * f.inv_std[r] * 1.5 <= 8) continue;
    for (std::int64_t c = 0; c < p.width; ++c)
      row[c] +=
          static_cast<float>(2.0 * static_cast<double>(c) / static_cast<double>(p.width - 1) - 1.0);
  }
  return x;
}

HostTensor gamma_of(const LayerNormParams& p) {
  return {"gamma", {p.width}, Role::kIn, Kind::kF32, positive_values(p.width, 72, 0.5f, 1.5f)};
}

// What both cases share: the shape, its parameters, and x (drawn from `seed`), whose
// conditioning sets the per-element tolerance against the CPU.
class LnCase : public OpCase {
 protected:
  LnCase(Shape s, std::uint64_t seed) : s_(s), p_(params_of(s)), seed_(seed) {}
  HostTensor x() const { return ln_input(p_, s_, seed_); }
  // Computed when first asked, so perf-sized cases (never compared) do not pay for it.
  Tolerance per_element_tolerance(const Precision& prec) const {
    if (!conditioning_) conditioning_ = conditioning(p_, x());
    return ln_tolerance(prec, p_.width, true, *conditioning_);
  }
  Shape s_;
  LayerNormParams p_;

 private:
  std::uint64_t seed_;
  mutable std::optional<double> conditioning_;
};

class LnForward final : public LnCase {
 public:
  explicit LnForward(Shape s) : LnCase(s, 71) {}
  std::string op() const override { return "layer_norm_forward"; }
  std::string params() const override { return shape_name(s_); }
  OpKind kind() const override { return OpKind::kLayerNormForward; }
  // x, gamma, beta, y, saved_mean, saved_inv_std.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {x(),
            gamma_of(p_),
            input("beta", {p_.width}, 73, Kind::kF32),
            output("y", s_),
            output("saved_mean", {p_.rows}, Kind::kF32),
            output("saved_inv_std", {p_.rows}, Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.layer_norm_forward(p_, t[0], t[1], t[2], t[3], t[4], t[5]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::LayerNormForward f =
        ref::layer_norm_forward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double());
    return {{3, f.y, kElementwise}, {4, f.mean, kElementwise}, {5, f.inv_std, kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 3 ? per_element_tolerance(prec) : ln_tolerance(prec, p_.width, false);
  }
  bool repeatable() const override { return true; }
};

class LnBackward final : public LnCase {
 public:
  LnBackward(Shape s, GradMode mode) : LnCase(s, 74), mode_(mode) {}
  std::string op() const override { return "layer_norm_backward"; }
  std::string params() const override { return shape_name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kLayerNormBackward; }
  // x, dy, gamma, the statistics forward saved (from the reference, in f32), dx, dgamma, dbeta.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const HostTensor x_in = x();
    const HostTensor gamma = gamma_of(p_);
    const ref::LayerNormForward f =
        ref::layer_norm_forward(p_, x_in.as_double(), gamma.as_double(), Vec(p_.width, 0.0));
    auto per_row = [&](const char* name, const Vec& v) {
      return HostTensor{
          name, {p_.rows}, Role::kIn, Kind::kF32, std::vector<float>(v.begin(), v.end())};
    };
    return {x_in,
            input("dy", s_, 75),
            gamma,
            per_row("saved_mean", f.mean),
            per_row("saved_inv_std", f.inv_std),
            grad_output("dx", s_, mode_, 76),
            output("dgamma", {p_.width}, Kind::kF32),
            output("dbeta", {p_.width}, Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.layer_norm_backward(p_, t[0], t[1], t[2], t[3], t[4], t[5], mode_, t[6], t[7]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::LayerNormGrads g =
        ref::layer_norm_backward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double());
    // The CPU normalizes with the saved statistics, rounded to f32: a relative 2^-24 of each.
    const Tolerance per_row = sum_tolerance(kF32, p_.width, kMagnitude);
    return {{5, expected_grad(mode_, t[5], g.dx), per_row},
            {6, g.dgamma, sum_tolerance(kF32, p_.rows, kMagnitude)},
            {7, g.dbeta, sum_tolerance(kF32, p_.rows, kMagnitude)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 5 ? per_element_tolerance(prec) : ln_tolerance(prec, p_.rows, false);
  }
  bool repeatable() const override { return true; }

 private:
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  // BERT-base's hidden activations at sequence 128 and batch 64: memory-bound.
  const Shape bert{64 * 128, 768};
  out.push_back(std::make_unique<PerfCase>(std::make_unique<LnForward>(bert)));
  out.push_back(
      std::make_unique<PerfCase>(std::make_unique<LnBackward>(bert, GradMode::kOverwrite)));
  for (const Shape& s : kShapes) {
    out.push_back(std::make_unique<LnForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<LnBackward>(s, m));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

// dx, dgamma and dbeta through the forward, at a width that leaves lanes idle.
std::vector<GradCase> grad_cases() {
  const Shape s{4, 7};
  const LayerNormParams p = params_of(s);
  const Shape row{p.rows}, column{p.width};
  GradCase g;
  g.op = "layer_norm";
  g.params = shape_name(s);
  g.kind = OpKind::kLayerNormBackward;
  g.tensors = {input("x", s, 131),
               {"gamma", column, Role::kIn, Kind::kF32, positive_values(p.width, 132, 0.5f, 1.5f)},
               input("beta", column, 133, Kind::kF32),
               input("dy", s, 134),
               output("y", s),
               output("saved_mean", row, Kind::kF32),
               output("saved_inv_std", row, Kind::kF32),
               output("dx", s),
               output("dgamma", column, Kind::kF32),
               output("dbeta", column, Kind::kF32)};
  g.wrt = {{0, 7}, {1, 8}, {2, 9}};
  g.weight = 3;
  g.forward = [p](const std::vector<Vec>& t) {
    return ref::layer_norm_forward(p, t[0], t[1], t[2]).y;
  };
  g.reference_backward = [p](const std::vector<Vec>& t) {
    const ref::LayerNormGrads r = ref::layer_norm_backward(p, t[0], t[3], t[1]);
    return std::vector<Vec>{r.dx, r.dgamma, r.dbeta};
  };
  g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
    be.layer_norm_forward(p, t[0], t[1], t[2], t[4], t[5], t[6]);
    be.layer_norm_backward(p, t[0], t[3], t[1], t[5], t[6], t[7], GradMode::kOverwrite, t[8], t[9]);
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
