// Dropout forward and backward: two forward calls from a step counter part-way through a run,
// the second call's output and the counter checked against dropout_mask.h's formula evaluated on
// the host; backward (both gradient modes) after a forward, with the forward's mask. Every
// backend draws the same mask, so CUDA is held to the CPU elementwise. The mask's statistics
// (the kept share, fresh masks per call) are tested in tests/ops/dropout_test.cc.
#include <sstream>

#include "engine/backend/dropout_mask.h"
#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

using backend::DropoutParams;
using backend::OpKind;

constexpr std::int32_t kFirstStep = 17;  // the counter before the first call
constexpr std::uint64_t kSeed = 99;

std::string name_of(const Shape& s, float probability) {
  std::ostringstream o;
  for (int i = 0; i < s.rank(); ++i) o << (i ? "x" : "") << s[i];
  o << "_p" << probability;
  return o.str();
}

// v / (1 - p) where the call at `step` keeps element i, else 0.
Vec masked(const DropoutParams& p, std::int32_t step, const Vec& v) {
  const std::uint64_t key = backend::dropout_key(p.seed, step);
  Vec out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = backend::dropout_keeps(key, static_cast<std::int64_t>(i), p.probability)
                 ? v[i] / (1.0 - static_cast<double>(p.probability))
                 : 0.0;
  return out;
}

// One f32 multiply rounded once: exact but for an ulp in f32, the output's rounding otherwise.
Tolerance dropout_tolerance(const Precision& prec, const DropoutParams& p) {
  if (prec.dtype == DType::kF32) return kElementwise;
  return sum_tolerance(prec, 1, 1.0 / (1.0 - p.probability));
}

HostTensor step_counter() {
  return {"step", {1}, Role::kInOut, Kind::kI32, {static_cast<float>(kFirstStep)}};
}

class DropoutForward final : public OpCase {
 public:
  DropoutForward(Shape s, float probability) : s_(s), p_{probability, kSeed} {}
  std::string op() const override { return "dropout_forward"; }
  std::string params() const override { return name_of(s_, p_.probability); }
  OpKind kind() const override { return OpKind::kDropoutForward; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {step_counter(), input("x", s_, 81), output("y", s_)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.dropout_forward(p_, t[0], t[1], t[2]);
    be.dropout_forward(p_, t[0], t[1], t[2]);  // the second call's mask is the one kept
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int32_t step = kFirstStep + 2;
    return {{0, {static_cast<double>(step)}, {0, 0}},
            {2, masked(p_, step, t[1].as_double()), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 0 ? Tolerance{0, 0} : dropout_tolerance(prec, p_);
  }

 private:
  Shape s_;
  DropoutParams p_;
};

class DropoutBackward final : public OpCase {
 public:
  DropoutBackward(Shape s, float probability, GradMode mode)
      : s_(s), p_{probability, kSeed}, mode_(mode) {}
  std::string op() const override { return "dropout_backward"; }
  std::string params() const override {
    return name_of(s_, p_.probability) + "_" + mode_name(mode_);
  }
  OpKind kind() const override { return OpKind::kDropoutBackward; }
  // The forward runs first (it advances the counter), then backward with its mask.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {step_counter(), input("x", s_, 82), output("y", s_), input("dy", s_, 83),
            grad_output("dx", s_, mode_, 84)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.dropout_forward(p_, t[0], t[1], t[2]);
    be.dropout_backward(p_, t[0], t[3], t[4], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int32_t step = kFirstStep + 1;
    return {{0, {static_cast<double>(step)}, {0, 0}},
            {2, masked(p_, step, t[1].as_double()), kElementwise},
            {4, expected_grad(mode_, t[4], masked(p_, step, t[3].as_double())), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 0 ? Tolerance{0, 0} : dropout_tolerance(prec, p_);
  }

 private:
  Shape s_;
  DropoutParams p_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  // Odd sizes, BERT's hidden activations, and p = 0 (the identity) and a large p.
  const std::vector<Shape> shapes = {{7}, {4, 33}, {2, 16, 768}};
  for (const Shape& s : shapes)
    for (float probability : {0.1f, 0.0f, 0.75f}) {
      out.push_back(std::make_unique<DropoutForward>(s, probability));
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
        out.push_back(std::make_unique<DropoutBackward>(s, probability, m));
    }
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
