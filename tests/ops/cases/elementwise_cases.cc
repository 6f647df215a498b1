// ReLU and identity forward and backward (with and without the bias gradient), GELU and tanh
// forward and backward, add, accumulate and multiply: the CPU backend against the float64
// reference, every other backend against the CPU in every float dtype and both gradient modes; and
// finite differences of ReLU and GELU.
#include <cmath>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::Activation;
using backend::OpKind;

std::string shape_name(const Shape& s) {
  std::ostringstream o;
  for (int i = 0; i < s.rank(); ++i) o << (i ? "x" : "") << s[i];
  return o.str();
}

// Small and odd sizes, an NHWC activation, and 7 x 1003 (not a multiple of any vector
// width: tails run too).
const std::vector<Shape> kShapes = {{7}, {2, 5, 5, 3}, {1000}, {4, 33}, {7, 1003}};
// The bias gradient's too: activations with rows in many chunks of the column sums, and 520
// channels (65 packs of 8 halves, so more than one block across and a partly used last one).
const std::vector<Shape> kBiasShapes = {{9, 17, 17, 64}, {3, 7, 7, 520}};

const char* act_name(Activation a) {
  return a == Activation::kRelu ? "relu" : "identity";
}

Vec activate(Activation a, const Vec& x) {
  return a == Activation::kRelu ? ref::relu_forward(x) : x;
}

// Elementwise results are one f32 operation rounded once to the dtype: exact in f32 but for
// an ulp, half an ulp of f16/bf16 otherwise.
Tolerance elementwise_tolerance(const Precision& prec) {
  if (prec.dtype == DType::kF32) return kElementwise;
  return sum_tolerance(prec, 1);
}

class ActivationForward final : public OpCase {
 public:
  ActivationForward(Activation a, Shape s) : a_(a), s_(s) {}
  std::string op() const override { return std::string(act_name(a_)) + "_forward"; }
  std::string params() const override { return shape_name(s_); }
  OpKind kind() const override { return OpKind::kActivationForward; }
  backend::OpParams op_params(const Precision&) const override { return a_; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("x", s_, a_ == Activation::kRelu ? 41 : 42), output("y", s_)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.activation_forward(a_, t[0], t[1]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    return {{1, activate(a_, t[0].as_double()), {0, 0}}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return elementwise_tolerance(prec);
  }

 private:
  Activation a_;
  Shape s_;
};

// y as the forward made it (ReLU's backward reads only y), dy, and dx under a GradMode; with
// a bias gradient, also dbias (under the other mode, so every pairing runs) over the last
// dimension: what a convolution's or matmul's ReLU epilogue folds its bias gradient into.
class ActivationBackward final : public OpCase {
 public:
  ActivationBackward(Activation a, Shape s, GradMode mode, bool bias_grad = false)
      : a_(a), s_(s), mode_(mode), bias_grad_(bias_grad) {}
  std::string op() const override {
    return std::string(act_name(a_)) + (bias_grad_ ? "_bias_backward" : "_backward");
  }
  std::string params() const override { return shape_name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kActivationBackward; }
  backend::OpParams op_params(const Precision&) const override { return a_; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    HostTensor y = input("y", s_, 44);
    const Vec forward = activate(a_, y.as_double());
    y.data.assign(forward.begin(), forward.end());
    std::vector<HostTensor> t = {y, input("dy", s_, 45), grad_output("dx", s_, mode_, 46)};
    if (bias_grad_) t.push_back(grad_output("dbias", {channels()}, bias_mode(), 47));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.activation_backward(a_, t[0], t[1], t[2], mode_, bias_grad_ ? t[3] : Tensor(), bias_mode());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec dy = t[1].as_double();
    const Vec dx = a_ == Activation::kRelu ? ref::relu_backward(t[0].as_double(), dy) : dy;
    std::vector<Check> checks = {{2, expected_grad(mode_, t[2], dx), kElementwise}};
    if (bias_grad_) {
      Vec dbias(static_cast<std::size_t>(channels()), 0.0);
      for (std::size_t i = 0; i < dx.size(); ++i) dbias[i % dbias.size()] += dx[i];
      checks.push_back({3, expected_grad(bias_mode(), t[3], dbias), sum_tolerance(rows())});
    }
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 3 ? sum_tolerance(prec, rows()) : elementwise_tolerance(prec);
  }
  bool repeatable() const override { return bias_grad_; }

 private:
  std::int64_t channels() const { return s_[s_.rank() - 1]; }
  std::int64_t rows() const { return s_.numel() / channels(); }
  GradMode bias_mode() const {
    return mode_ == GradMode::kOverwrite ? GradMode::kAccumulate : GradMode::kOverwrite;
  }

  Activation a_;
  Shape s_;
  GradMode mode_;
  bool bias_grad_;
};

// add (y = a + b) and accumulate (b += a).
class Sum final : public OpCase {
 public:
  Sum(bool accumulate, Shape s) : accumulate_(accumulate), s_(s) {}
  std::string op() const override { return accumulate_ ? "accumulate" : "add"; }
  std::string params() const override { return shape_name(s_); }
  OpKind kind() const override { return accumulate_ ? OpKind::kAccumulate : OpKind::kAdd; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {input("a", s_, 47), input("b", s_, 48)};
    if (accumulate_)
      t[1].role = Role::kInOut;
    else
      t.push_back(output("y", s_));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    if (accumulate_)
      be.accumulate(t[0], t[1]);
    else
      be.add(t[0], t[1], t[2]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    Vec sum = t[0].as_double();
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += t[1].data[i];
    return {{accumulate_ ? 1u : 2u, sum, kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return elementwise_tolerance(prec);
  }

 private:
  bool accumulate_;
  Shape s_;
};

// multiply (y = a * b, or y += a * b): NCF's generalized matrix factorization, and its own
// backward (da = dy * b).
class Product final : public OpCase {
 public:
  Product(GradMode mode, Shape s) : mode_(mode), s_(s) {}
  std::string op() const override { return "multiply"; }
  std::string params() const override { return shape_name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kMultiply; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("a", s_, 57), input("b", s_, 58), grad_output("y", s_, mode_, 59)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.multiply(t[0], t[1], t[2], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    Vec product = t[0].as_double();
    for (std::size_t i = 0; i < product.size(); ++i) product[i] *= t[1].data[i];
    return {{2, expected_grad(mode_, t[2], product), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return elementwise_tolerance(prec);
  }

 private:
  GradMode mode_;
  Shape s_;
};

// The smooth activations of the attention models: GELU (the feed-forward's) and tanh (BERT's
// pooler). Inputs span [-4, 4] (random values times 4): the curved parts and both tails.
enum class Smooth { kGelu, kTanh };

const char* smooth_name(Smooth f) {
  return f == Smooth::kGelu ? "gelu" : "tanh";
}

HostTensor smooth_input(const Shape& s, std::uint64_t seed) {
  HostTensor x = input("x", s, seed);
  for (float& v : x.data) v *= 4.0f;
  return x;
}

// Values and derivatives reach about 4 and 1.1: CUDA's f32 math functions and the CPU's double
// math differ by a few f32 ulps.
class SmoothForward final : public OpCase {
 public:
  SmoothForward(Smooth f, Shape s) : f_(f), s_(s) {}
  std::string op() const override { return std::string(smooth_name(f_)) + "_forward"; }
  std::string params() const override { return shape_name(s_); }
  OpKind kind() const override {
    return f_ == Smooth::kGelu ? OpKind::kGeluForward : OpKind::kTanhForward;
  }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {smooth_input(s_, 43), output("y", s_)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    if (f_ == Smooth::kGelu)
      be.gelu_forward(t[0], t[1]);
    else
      be.tanh_forward(t[0], t[1]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec x = t[0].as_double();
    return {{1, f_ == Smooth::kGelu ? ref::gelu_forward(x) : ref::tanh_forward(x), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return elementwise_tolerance(prec);
  }

 private:
  Smooth f_;
  Shape s_;
};

// GELU's backward reads x; tanh's reads y = tanh(x) (values in (-1, 1), as forward writes them),
// held to dy (1 - y^2).
class SmoothBackward final : public OpCase {
 public:
  SmoothBackward(Smooth f, Shape s, GradMode mode) : f_(f), s_(s), mode_(mode) {}
  std::string op() const override { return std::string(smooth_name(f_)) + "_backward"; }
  std::string params() const override { return shape_name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override {
    return f_ == Smooth::kGelu ? OpKind::kGeluBackward : OpKind::kTanhBackward;
  }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    HostTensor dy = input("dy", s_, 45), dx = grad_output("dx", s_, mode_, 46);
    if (f_ == Smooth::kGelu) return {smooth_input(s_, 44), dy, dx};
    std::vector<float> y = smooth_input(s_, 44).data;
    for (float& v : y) v = std::tanh(v);
    return {{"y", s_, Role::kIn, Kind::kCompute, std::move(y)}, dy, dx};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    if (f_ == Smooth::kGelu)
      be.gelu_backward(t[0], t[1], t[2], mode_);
    else
      be.tanh_backward(t[0], t[1], t[2], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec in = t[0].as_double(), dy = t[1].as_double();
    Vec dx;
    if (f_ == Smooth::kGelu) {
      dx = ref::gelu_backward(in, dy);
    } else {
      dx.resize(in.size());
      for (std::size_t i = 0; i < in.size(); ++i) dx[i] = dy[i] * (1 - in[i] * in[i]);
    }
    return {{2, expected_grad(mode_, t[2], dx), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return elementwise_tolerance(prec);
  }

 private:
  Smooth f_;
  Shape s_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  // ResNet-50's stage-1 output, 56x56x256 at kPerfBatch: memory-bound.
  const Shape stage1{kPerfBatch, 56, 56, 256};
  out.push_back(
      std::make_unique<PerfCase>(std::make_unique<ActivationForward>(Activation::kRelu, stage1)));
  out.push_back(std::make_unique<PerfCase>(std::make_unique<Sum>(false, stage1)));
  for (const Shape& s : kShapes) {
    for (Activation a : {Activation::kRelu, Activation::kNone}) {
      out.push_back(std::make_unique<ActivationForward>(a, s));
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate}) {
        out.push_back(std::make_unique<ActivationBackward>(a, s, m));
        out.push_back(std::make_unique<ActivationBackward>(a, s, m, true));
      }
    }
    out.push_back(std::make_unique<Sum>(false, s));
    out.push_back(std::make_unique<Sum>(true, s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<Product>(m, s));
    for (Smooth f : {Smooth::kGelu, Smooth::kTanh}) {
      out.push_back(std::make_unique<SmoothForward>(f, s));
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
        out.push_back(std::make_unique<SmoothBackward>(f, s, m));
    }
  }
  for (const Shape& s : kBiasShapes)
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<ActivationBackward>(Activation::kRelu, s, m, true));
  return out;
}
DLBENCH_OP_CASES(cases);

// |x| >= 0.1 (random values), so no finite-difference step crosses the kink at 0.
std::vector<GradCase> grad_cases() {
  const Shape s{4, 6};
  GradCase g;
  g.op = "relu";
  g.params = shape_name(s);
  g.kind = OpKind::kActivationBackward;
  g.op_params = Activation::kRelu;
  g.tensors = {input("x", s, 121), input("dy", s, 122), output("y", s), output("dx", s)};
  g.wrt = {{0, 3}};
  g.weight = 1;
  g.forward = [](const std::vector<Vec>& t) { return ref::relu_forward(t[0]); };
  g.reference_backward = [](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::relu_backward(ref::relu_forward(t[0]), t[1])};
  };
  g.backward = [](backend::Backend& be, std::span<const Tensor> t) {
    be.activation_forward(Activation::kRelu, t[0], t[2]);
    be.activation_backward(Activation::kRelu, t[2], t[1], t[3], GradMode::kOverwrite);
  };
  std::vector<GradCase> out;
  out.push_back(std::move(g));
  // GELU's backward reads x, tanh's its forward's y.
  for (Smooth f : {Smooth::kGelu, Smooth::kTanh}) {
    const bool gelu = f == Smooth::kGelu;
    GradCase c;
    c.op = smooth_name(f);
    c.params = shape_name(s);
    c.kind = gelu ? OpKind::kGeluBackward : OpKind::kTanhBackward;
    c.tensors = {smooth_input(s, 123), input("dy", s, 124), output("y", s), output("dx", s)};
    c.wrt = {{0, 3}};
    c.weight = 1;
    c.forward = [gelu](const std::vector<Vec>& t) {
      return gelu ? ref::gelu_forward(t[0]) : ref::tanh_forward(t[0]);
    };
    c.reference_backward = [gelu](const std::vector<Vec>& t) {
      return std::vector<Vec>{gelu ? ref::gelu_backward(t[0], t[1])
                                   : ref::tanh_backward(t[0], t[1])};
    };
    c.backward = [gelu](backend::Backend& be, std::span<const Tensor> t) {
      if (gelu) {
        be.gelu_forward(t[0], t[2]);
        be.gelu_backward(t[0], t[1], t[3], GradMode::kOverwrite);
      } else {
        be.tanh_forward(t[0], t[2]);
        be.tanh_backward(t[2], t[1], t[3], GradMode::kOverwrite);
      }
    };
    out.push_back(std::move(c));
  }
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
