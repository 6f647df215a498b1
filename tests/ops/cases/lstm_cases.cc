// The LSTM layer forward and backward: the CPU backend against the float64 reference (the
// cell's equations and backpropagation through time), every other backend against the CPU in
// every float dtype; and finite differences of the reference forward. Shapes cover one step,
// input narrower and wider than the hidden state, widths of no power of two, and longer
// sequences; with and without given states, in training and inference, both gradient modes.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference_lstm.h"

namespace dlbench::op_harness {
namespace {

using backend::LstmParams;
using backend::OpKind;

LstmParams lstm(std::int64_t batch, std::int64_t steps, std::int64_t input, std::int64_t hidden) {
  LstmParams p;
  p.batch = batch, p.steps = steps, p.input = input, p.hidden = hidden;
  return p;
}

const std::vector<LstmParams>& shapes() {
  static const std::vector<LstmParams> all = {
      lstm(3, 5, 6, 4),  lstm(5, 1, 8, 8),  lstm(4, 7, 16, 8),
      lstm(2, 3, 8, 24), lstm(3, 4, 13, 7), lstm(8, 12, 32, 32),
  };
  return all;
}

std::string name_of(const LstmParams& p) {
  std::ostringstream o;
  o << "b" << p.batch << "_t" << p.steps << "_i" << p.input << "_h" << p.hidden;
  return o.str();
}

// Weights of magnitude up to 1 / sqrt(input + hidden), so the gates' inputs stay near 1 and
// the nonlinearities are neither linear nor saturated.
HostTensor weights(const LstmParams& p, std::uint64_t seed) {
  HostTensor w = input("w", {p.weights()}, seed);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.input + p.hidden)));
  for (float& v : w.data) v *= scale;
  return w;
}

// The reserve, large enough for every dtype a backend runs the case in (the harness sizes
// tensors before it knows the precision).
HostTensor reserve(const backend::Backend& be, const LstmParams& p) {
  const std::size_t bytes = be.largest_lstm_reserve_bytes(p);
  const auto floats = static_cast<std::int64_t>((bytes + 3) / 4);
  return {"reserve",
          {std::max<std::int64_t>(floats, 1)},
          Role::kScratch,
          Kind::kF32,
          std::vector<float>(static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)), 0.0f)};
}

// A tensor the case does not hand over (no states): scratch, so it is neither checked nor
// compared.
HostTensor unused(HostTensor t) {
  t.role = Role::kScratch;
  return t;
}

// Each step's gates are sums of input + hidden products. The recurrence carries the earlier
// steps' errors on, but damped (through the forget gate, below 1, and the gates' slopes), so
// they add up to a small multiple of one step's, not to the steps' count of them; f16 and bf16
// round h every step on the device, which then feeds the next step's products.
Tolerance forward_tolerance(const Precision& prec, const LstmParams& p) {
  return sum_tolerance(prec, p.input + p.hidden, 2.0);
}
// Gradients reach a few units; the weights' sum over every step and sample.
Tolerance backward_tolerance(const Precision& prec, const LstmParams& p) {
  return sum_tolerance(prec, p.steps * p.batch + p.input + p.hidden, 4.0);
}

class LstmCase : public OpCase {
 protected:
  LstmCase(const LstmParams& p, bool states) : p_(p), states_(states) {}
  bool has_math_mode() const override { return true; }
  backend::OpParams op_params(const Precision& prec) const override {
    LstmParams p = p_;
    p.math = prec.math;
    return p;
  }
  LstmParams params_at(const Precision& prec) const {
    return std::get<LstmParams>(op_params(prec));
  }
  // The states as given: a tensor, or none.
  Tensor state(const Tensor& t) const { return states_ ? t : Tensor{}; }
  HostTensor state_input(const char* name, std::uint64_t seed) const {
    HostTensor t = input(name, p_.state_shape(), seed);
    return states_ ? t : unused(t);
  }
  Vec state_values(const HostTensor& t) const { return states_ ? t.as_double() : Vec{}; }
  std::string states_name() const { return states_ ? "_states" : ""; }
  double flops() const override { return 2.0 * static_cast<double>(p_.macs()); }

  LstmParams p_;
  bool states_;
};

class LstmForward final : public LstmCase {
 public:
  LstmForward(const LstmParams& p, bool states, bool training)
      : LstmCase(p, states), training_(training) {}
  std::string op() const override { return "lstm_forward"; }
  std::string params() const override {
    return name_of(p_) + states_name() + (training_ ? "_training" : "_inference");
  }
  OpKind kind() const override { return OpKind::kLstmForward; }
  // x, w, h0, c0, y, hn, cn, reserve.
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    HostTensor hn = output("hn", p_.state_shape()), cn = output("cn", p_.state_shape());
    return {input("x", p_.input_shape(), 401),
            weights(p_, 402),
            state_input("h0", 403),
            state_input("c0", 404),
            output("y", p_.output_shape()),
            states_ ? hn : unused(hn),
            states_ ? cn : unused(cn),
            reserve(be, p_)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.lstm_forward(params_at(prec), t[0], t[1], state(t[2]), state(t[3]), t[4], state(t[5]),
                    state(t[6]), training_ ? t[7] : Tensor{});
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::LstmForward f = ref::lstm_forward(p_, t[0].as_double(), t[1].as_double(),
                                                 state_values(t[2]), state_values(t[3]));
    const Tolerance tol = forward_tolerance(kF32, p_);
    std::vector<Check> checks = {{4, f.y, tol}};
    if (states_) checks.push_back({5, f.hn, tol}), checks.push_back({6, f.cn, tol});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return forward_tolerance(prec, p_);
  }
  bool repeatable() const override { return true; }

 private:
  bool training_;
};

class LstmBackward final : public LstmCase {
 public:
  // mode: dx's; dw_mode: the weights' (a layer's input and parameter modes differ).
  LstmBackward(const LstmParams& p, bool states, GradMode mode, GradMode dw_mode)
      : LstmCase(p, states), mode_(mode), dw_mode_(dw_mode) {}
  std::string op() const override { return "lstm_backward"; }
  std::string params() const override {
    return name_of(p_) + states_name() + "_" + mode_name(mode_) +
           (dw_mode_ == mode_ ? "" : std::string("_dw_") + mode_name(dw_mode_));
  }
  OpKind kind() const override { return OpKind::kLstmBackward; }
  // x, w, h0, c0, dy, dhn, dcn, y, reserve (the forward's, run first), dx, dh0, dc0, dw.
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    HostTensor dh0 = output("dh0", p_.state_shape()), dc0 = output("dc0", p_.state_shape());
    return {input("x", p_.input_shape(), 411),
            weights(p_, 412),
            state_input("h0", 413),
            state_input("c0", 414),
            input("dy", p_.output_shape(), 415),
            state_input("dhn", 416),
            state_input("dcn", 417),
            unused(output("y", p_.output_shape())),
            reserve(be, p_),
            grad_output("dx", p_.input_shape(), mode_, 418),
            states_ ? dh0 : unused(dh0),
            states_ ? dc0 : unused(dc0),
            grad_output("dw", {p_.weights()}, dw_mode_, 419)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    const LstmParams p = params_at(prec);
    be.lstm_forward(p, t[0], t[1], state(t[2]), state(t[3]), t[7], {}, {}, t[8]);
    be.lstm_backward(p, t[0], t[1], state(t[2]), state(t[3]), t[7], t[4], state(t[5]), state(t[6]),
                     t[8], t[9], mode_, state(t[10]), state(t[11]), t[12], dw_mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::LstmGrads g = ref::lstm_backward(
        p_, t[0].as_double(), t[1].as_double(), state_values(t[2]), state_values(t[3]),
        t[4].as_double(), state_values(t[5]), state_values(t[6]));
    const Tolerance tol = backward_tolerance(kF32, p_);
    std::vector<Check> checks = {{9, expected_grad(mode_, t[9], g.dx), tol},
                                 {12, expected_grad(dw_mode_, t[12], g.dw), tol}};
    if (states_) checks.push_back({10, g.dh0, tol}), checks.push_back({11, g.dc0, tol});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return backward_tolerance(prec, p_);
  }
  bool repeatable() const override { return true; }

 private:
  GradMode mode_, dw_mode_;
};

CaseList cases() {
  CaseList out;
  // GNMT's decoder layer at batch 128 and 50 tokens (input: the embedding and the context).
  const LstmParams gnmt = lstm(128, 50, 2048, 1024);
  out.push_back(std::make_unique<PerfCase>(std::make_unique<LstmForward>(gnmt, false, true)));
  out.push_back(std::make_unique<PerfCase>(
      std::make_unique<LstmBackward>(gnmt, false, GradMode::kOverwrite, GradMode::kOverwrite)));
  for (const LstmParams& p : shapes())
    for (bool states : {false, true}) {
      for (bool training : {false, true})
        out.push_back(std::make_unique<LstmForward>(p, states, training));
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
        for (GradMode dw : {GradMode::kOverwrite, GradMode::kAccumulate})
          out.push_back(std::make_unique<LstmBackward>(p, states, m, dw));
    }
  return out;
}
DLBENCH_OP_CASES(cases);

// dx, dw, dh0 and dc0 through three steps, from y's gradient alone (dhn and dcn zero).
std::vector<GradCase> grad_cases() {
  const LstmParams p = lstm(2, 3, 3, 2);
  GradCase g;
  g.op = "lstm";
  g.params = name_of(p);
  g.kind = OpKind::kLstmBackward;
  g.op_params = p;
  // Generous: the reserve is sized before a backend is known, and this shape needs little.
  constexpr std::int64_t kReserveFloats = std::int64_t{1} << 18;
  g.tensors = {input("x", p.input_shape(), 421),
               weights(p, 422),
               input("h0", p.state_shape(), 423),
               input("c0", p.state_shape(), 424),
               input("dy", p.output_shape(), 425),
               output("y", p.output_shape()),
               {"reserve",
                {kReserveFloats},
                Role::kScratch,
                Kind::kF32,
                std::vector<float>(kReserveFloats, 0.0f)},
               output("dx", p.input_shape()),
               output("dw", {p.weights()}),
               output("dh0", p.state_shape()),
               output("dc0", p.state_shape())};
  g.wrt = {{0, 7}, {1, 8}, {2, 9}, {3, 10}};
  g.weight = 4;
  g.forward = [p](const std::vector<Vec>& t) {
    return ref::lstm_forward(p, t[0], t[1], t[2], t[3]).y;
  };
  g.reference_backward = [p](const std::vector<Vec>& t) {
    const ref::LstmGrads r = ref::lstm_backward(p, t[0], t[1], t[2], t[3], t[4], {}, {});
    return std::vector<Vec>{r.dx, r.dw, r.dh0, r.dc0};
  };
  g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
    be.lstm_forward(p, t[0], t[1], t[2], t[3], t[5], {}, {}, t[6]);
    be.lstm_backward(p, t[0], t[1], t[2], t[3], t[5], t[4], {}, {}, t[6], t[7],
                     GradMode::kOverwrite, t[9], t[10], t[8], GradMode::kOverwrite);
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
