// Matmul (inner product) with bias and ReLU epilogues, forward, backward-data and
// backward-weights: the CPU backend against the float64 reference, every other backend against
// the CPU in every precision and both gradient modes; and finite differences of the forward.
#include <set>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::Activation;
using backend::MatmulParams;
using backend::OpKind;

MatmulParams mm(std::int64_t m, std::int64_t k, std::int64_t n, bool bias, Activation act) {
  MatmulParams p;
  p.m = m, p.k = k, p.n = n, p.bias = bias, p.activation = act;
  return p;
}

std::string name(const MatmulParams& p) {
  std::ostringstream o;
  o << "m" << p.m << "_k" << p.k << "_n" << p.n << (p.bias ? "_bias" : "_nobias")
    << (p.activation == Activation::kRelu ? "_relu" : "");
  return o.str();
}

// Classifier heads (ResNet's 2048 -> classes, shrunk and full), VGG's ReLU'd fully connected
// layers, a single row, odd sizes (no alignment for vector loads), every epilogue and a
// tensor-core-sized block.
const std::vector<MatmulParams> kShapes = {
    mm(4, 16, 8, false, Activation::kNone),   mm(8, 64, 10, true, Activation::kNone),
    mm(5, 33, 17, true, Activation::kRelu),   mm(1, 128, 64, true, Activation::kRelu),
    mm(16, 7, 3, false, Activation::kRelu),   mm(32, 256, 100, true, Activation::kNone),
    mm(4, 16, 8, true, Activation::kRelu),    mm(3, 5, 7, false, Activation::kNone),
    mm(16, 64, 32, true, Activation::kNone),  mm(8, 33, 10, false, Activation::kRelu),
    mm(6, 2048, 10, true, Activation::kNone), mm(64, 256, 128, true, Activation::kRelu),
};

class MatmulCase : public OpCase {
 public:
  MatmulCase(MatmulParams p, OpKind kind, GradMode mode) : p_(p), kind_(kind), mode_(mode) {}
  std::string params() const override {
    return kind_ == OpKind::kMatmulForward ? name(p_) : name(p_) + "_" + mode_name(mode_);
  }
  OpKind kind() const override { return kind_; }
  bool has_math_mode() const override { return true; }
  backend::OpParams op_params(const Precision& prec) const override { return with_math(prec); }
  double flops() const override { return 2.0 * static_cast<double>(p_.m * p_.n * p_.k); }

 protected:
  MatmulParams with_math(const Precision& prec) const {
    MatmulParams p = p_;
    p.math = prec.math;
    return p;
  }
  MatmulParams p_;
  OpKind kind_;
  GradMode mode_;
};

class MatmulForward final : public MatmulCase {
 public:
  explicit MatmulForward(MatmulParams p)
      : MatmulCase(p, OpKind::kMatmulForward, GradMode::kOverwrite) {}
  std::string op() const override { return "matmul_forward"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("x", {p_.m, p_.k}, 31), input("w", {p_.n, p_.k}, 32), input("bias", {p_.n}, 33),
            output("y", {p_.m, p_.n})};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.matmul_forward(with_math(prec), t[0], t[1], p_.bias ? t[2] : Tensor(), t[3]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    return {{3, ref::matmul_forward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double()),
             sum_tolerance(p_.k)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.k + 1);
  }
};

class MatmulBackwardData final : public MatmulCase {
 public:
  MatmulBackwardData(MatmulParams p, GradMode mode)
      : MatmulCase(p, OpKind::kMatmulBackwardData, mode) {}
  std::string op() const override { return "matmul_backward_data"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("dy", {p_.m, p_.n}, 34), input("w", {p_.n, p_.k}, 32),
            grad_output("dx", {p_.m, p_.k}, mode_, 35)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.matmul_backward_data(with_math(prec), t[0], t[1], t[2], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec dx = ref::matmul_backward_data(p_, t[0].as_double(), t[1].as_double());
    return {{2, expected_grad(mode_, t[2], dx), sum_tolerance(p_.n)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.n + 1);
  }
};

class MatmulBackwardWeights final : public MatmulCase {
 public:
  MatmulBackwardWeights(MatmulParams p, GradMode mode)
      : MatmulCase(p, OpKind::kMatmulBackwardWeights, mode) {}
  std::string op() const override { return "matmul_backward_weights"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {input("x", {p_.m, p_.k}, 31), input("dy", {p_.m, p_.n}, 34),
                                 grad_output("dw", {p_.n, p_.k}, mode_, 36)};
    if (p_.bias) t.push_back(grad_output("dbias", {p_.n}, mode_, 37));
    return t;
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.matmul_backward_weights(with_math(prec), t[0], t[1], t[2], p_.bias ? t[3] : Tensor(), mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::WeightGrads g = ref::matmul_backward_weights(p_, t[0].as_double(), t[1].as_double());
    std::vector<Check> checks = {{2, expected_grad(mode_, t[2], g.dw), sum_tolerance(p_.m)}};
    if (p_.bias) checks.push_back({3, expected_grad(mode_, t[3], g.dbias), sum_tolerance(p_.m)});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.m + 1);
  }
};

// An input scaled by 4, so that GELU sees its curved part and both tails.
HostTensor spread(HostTensor t) {
  for (float& v : t.data) v *= 4.0f;
  return t;
}

// p with one of the GELU epilogues switched on.
MatmulParams with(MatmulParams p, bool MatmulParams::*gelu) {
  p.*gelu = true;
  return p;
}

// Forward with GELU in its epilogue: y = GELU(x · Wᵀ + b), keeping the pre-activation or not
// (training's GELU_AUX_BIAS, inference's GELU_BIAS).
class MatmulForwardGelu final : public MatmulCase {
 public:
  MatmulForwardGelu(MatmulParams p, bool keep_pre)
      : MatmulCase(with(p, &MatmulParams::gelu), OpKind::kMatmulForward, GradMode::kOverwrite),
        keep_(keep_pre) {}
  std::string op() const override { return "matmul_forward"; }
  std::string params() const override { return name(p_) + (keep_ ? "_gelu_aux" : "_gelu"); }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {spread(input("x", {p_.m, p_.k}, 31)), input("w", {p_.n, p_.k}, 32),
                                 input("bias", {p_.n}, 33), output("y", {p_.m, p_.n})};
    if (keep_) t.push_back(output("pre", {p_.m, p_.n}));
    return t;
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.matmul_forward(with_math(prec), t[0], t[1], p_.bias ? t[2] : Tensor(), t[3],
                      keep_ ? t[4] : Tensor());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec pre = ref::matmul_forward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double());
    std::vector<Check> checks = {{3, ref::gelu_forward(pre), sum_tolerance(p_.k)}};
    if (keep_) checks.push_back({4, pre, sum_tolerance(p_.k)});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.k + 1);
  }

 private:
  bool keep_;
};

// Backward-data with the GELU gradient in its epilogue: dx = (dy · W) * GELU'(x_pre), the
// feed-forward's dGELU folded into the product that follows it (overwriting only).
class MatmulBackwardGelu final : public MatmulCase {
 public:
  explicit MatmulBackwardGelu(MatmulParams p)
      : MatmulCase(with(p, &MatmulParams::gelu_gradient), OpKind::kMatmulBackwardData,
                   GradMode::kOverwrite) {}
  std::string op() const override { return "matmul_backward_data"; }
  std::string params() const override { return name(p_) + "_dgelu"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("dy", {p_.m, p_.n}, 34), input("w", {p_.n, p_.k}, 32),
            spread(input("gelu_input", {p_.m, p_.k}, 38)), output("dx", {p_.m, p_.k})};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.matmul_backward_data(with_math(prec), t[0], t[1], t[3], GradMode::kOverwrite, t[2]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec dh = ref::matmul_backward_data(p_, t[0].as_double(), t[1].as_double());
    return {{3, ref::gelu_backward(t[2].as_double(), dh), sum_tolerance(p_.n)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, p_.n + 1);
  }
};

CaseList cases() {
  CaseList out;
  // BERT's feed-forward products (H -> 4H -> H) shrunk, odd rows, and widths off the multiples of
  // 8 (CUDA leaves those unfused).
  for (const MatmulParams& p :
       {mm(16, 64, 32, true, Activation::kNone), mm(5, 24, 7, false, Activation::kNone),
        mm(5, 24, 16, false, Activation::kNone), mm(64, 256, 128, true, Activation::kNone),
        mm(8, 12, 16, true, Activation::kNone)}) {
    for (bool keep_pre : {false, true})
      out.push_back(std::make_unique<MatmulForwardGelu>(p, keep_pre));
    out.push_back(std::make_unique<MatmulBackwardGelu>(p));
  }
  // A large square product: the tensor cores' ceiling; and ResNet-50's classifier head.
  for (const MatmulParams& p : {mm(8192, 8192, 8192, false, Activation::kNone),
                                mm(kPerfBatch, 2048, 1000, true, Activation::kNone)})
    out.push_back(std::make_unique<PerfCase>(std::make_unique<MatmulForward>(p)));
  for (const MatmulParams& p : kShapes) out.push_back(std::make_unique<MatmulForward>(p));
  // Backward runs after the activation's own backward, so its parameters carry no activation
  // (two shapes that differ only in the epilogue are one backward case).
  std::set<std::string> seen;
  for (MatmulParams p : kShapes) {
    p.activation = Activation::kNone;
    if (!seen.insert(name(p)).second) continue;
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) {
      out.push_back(std::make_unique<MatmulBackwardData>(p, m));
      out.push_back(std::make_unique<MatmulBackwardWeights>(p, m));
    }
  }
  return out;
}
DLBENCH_OP_CASES(cases);

std::vector<GradCase> grad_cases() {
  const MatmulParams p = mm(3, 4, 5, true, Activation::kNone);
  GradCase g;
  g.op = "matmul";
  g.params = name(p);
  g.kind = OpKind::kMatmulBackwardData;
  g.op_params = p;
  g.tensors = {input("x", {p.m, p.k}, 111),  input("w", {p.n, p.k}, 112), input("bias", {p.n}, 113),
               input("dy", {p.m, p.n}, 114), output("dx", {p.m, p.k}),    output("dw", {p.n, p.k}),
               output("dbias", {p.n})};
  g.wrt = {{0, 4}, {1, 5}, {2, 6}};
  g.weight = 3;
  g.forward = [p](const std::vector<Vec>& t) { return ref::matmul_forward(p, t[0], t[1], t[2]); };
  g.reference_backward = [p](const std::vector<Vec>& t) {
    ref::WeightGrads w = ref::matmul_backward_weights(p, t[0], t[3]);
    return std::vector<Vec>{ref::matmul_backward_data(p, t[3], t[1]), w.dw, w.dbias};
  };
  g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
    be.matmul_backward_data(p, t[3], t[1], t[4], GradMode::kOverwrite);
    be.matmul_backward_weights(p, t[0], t[3], t[5], t[6], GradMode::kOverwrite);
  };
  // GELU, then the product: the GELU-gradient epilogue against differences of y = GELU(x)·Wᵀ + b.
  const MatmulParams q = with(p, &MatmulParams::gelu_gradient);
  GradCase h;
  h.op = "gelu_matmul";
  h.params = name(p);
  h.kind = OpKind::kMatmulBackwardData;
  h.op_params = q;
  h.tensors = {input("x", {p.m, p.k}, 121), input("w", {p.n, p.k}, 122), input("bias", {p.n}, 123),
               input("dy", {p.m, p.n}, 124), output("dx", {p.m, p.k})};
  h.wrt = {{0, 4}};
  h.weight = 3;
  h.forward = [p](const std::vector<Vec>& t) {
    return ref::matmul_forward(p, ref::gelu_forward(t[0]), t[1], t[2]);
  };
  h.reference_backward = [p](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::gelu_backward(t[0], ref::matmul_backward_data(p, t[3], t[1]))};
  };
  h.backward = [q](backend::Backend& be, std::span<const Tensor> t) {
    be.matmul_backward_data(q, t[3], t[1], t[4], GradMode::kOverwrite, t[0]);
  };
  std::vector<GradCase> out;
  out.push_back(std::move(g));
  out.push_back(std::move(h));
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
