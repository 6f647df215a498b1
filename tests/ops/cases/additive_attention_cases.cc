// GNMT's normalized Bahdanau attention forward and backward: the CPU backend against the float64
// reference (every tanh term in a table, the normalization and the softmax by their Jacobians),
// every other backend against the CPU in every float dtype, and finite differences of the
// reference forward. Shapes cover one key, a sample of length 0, widths of no power of two,
// and keys, queries and widths past a CUDA block's 256 threads; gradients in both modes, the
// inputs' and the parameters' apart (as a layer passes them).
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference_additive_attention.h"

namespace dlbench::op_harness {
namespace {

using backend::AdditiveAttentionParams;
using backend::OpKind;

struct Setup {
  AdditiveAttentionParams p;
  std::vector<std::int32_t> lengths;
};

Setup setup(std::int64_t batch, std::int64_t queries, std::int64_t keys, std::int64_t width,
            std::int64_t value_width, std::vector<std::int32_t> lengths) {
  Setup s;
  s.p.batch = batch, s.p.queries = queries, s.p.keys = keys;
  s.p.width = width, s.p.value_width = value_width;
  s.lengths = std::move(lengths);
  return s;
}

const std::vector<Setup>& setups() {
  static const std::vector<Setup> all = {
      setup(1, 1, 1, 4, 3, {1}),
      setup(3, 4, 5, 8, 6, {5, 2, 0}),  // a sample of no tokens: probs and context 0
      setup(2, 3, 7, 13, 5, {7, 4}),
      setup(4, 6, 9, 32, 24, {9, 1, 6, 8}),
      setup(2, 3, 300, 16, 8, {300, 171}),  // more keys than a block has threads
      setup(2, 300, 4, 8, 8, {4, 3}),       // more queries than that
      setup(2, 2, 3, 600, 300, {3, 2}),     // wider than that
  };
  return all;
}

std::string name_of(const AdditiveAttentionParams& p) {
  std::ostringstream o;
  o << "b" << p.batch << "_q" << p.queries << "_k" << p.keys << "_w" << p.width << "_v"
    << p.value_width;
  return o.str();
}

// Forward's values: every score is a sum of `width` tanh terms weighted by u (|u| = g <= 1), the
// context a sum over the keys of values of magnitude <= 1.
Tolerance forward_tolerance(const Precision& prec, const AdditiveAttentionParams& p) {
  return sum_tolerance(prec, p.width + p.keys, 2.0);
}
// The probabilities are f32 in every dtype, from the same rounded inputs on both sides.
Tolerance probs_tolerance(const AdditiveAttentionParams& p) {
  return sum_tolerance(kF32, p.width + p.keys, 2.0);
}
// dq, dk and dvalues sum over keys or queries of terms that are themselves sums over the value
// width; dv and dg over every (sample, query, key).
Tolerance grad_tolerance(const Precision& prec, const AdditiveAttentionParams& p, bool params) {
  const std::int64_t sums = params ? p.batch * p.queries * p.keys : p.queries + p.keys;
  return sum_tolerance(prec, sums + p.width + p.value_width, 4.0);
}

class AdditiveCase : public OpCase {
 protected:
  explicit AdditiveCase(const Setup& s) : s_(s) {}
  backend::OpParams op_params(const Precision&) const override { return s_.p; }
  double flops() const override { return 2.0 * static_cast<double>(s_.p.macs()); }
  // q, k, values, v, g, lengths: the forward's inputs.
  std::vector<HostTensor> inputs(std::uint64_t seed) const {
    const AdditiveAttentionParams& p = s_.p;
    return {input("q", p.query_shape(), seed),          input("k", p.key_shape(), seed + 1),
            input("values", p.value_shape(), seed + 2), input("v", {p.width}, seed + 3),
            input("g", {1}, seed + 4, Kind::kF32),      i32_input("lengths", s_.lengths)};
  }
  Setup s_;
};

class AdditiveForward final : public AdditiveCase {
 public:
  explicit AdditiveForward(const Setup& s) : AdditiveCase(s) {}
  std::string op() const override { return "additive_attention_forward"; }
  std::string params() const override { return name_of(s_.p); }
  OpKind kind() const override { return OpKind::kAdditiveAttentionForward; }
  // q, k, values, v, g, lengths, o, probs.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = inputs(601);
    t.push_back(output("o", s_.p.output_shape()));
    t.push_back(output("probs", s_.p.probs_shape(), Kind::kF32));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.additive_attention_forward(s_.p, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::AdditiveForward f =
        ref::additive_attention_forward(s_.p, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                        t[3].as_double(), t[4].as_double(), s_.lengths);
    return {{6, f.o, kElementwise}, {7, f.probs, kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 7 ? probs_tolerance(s_.p) : forward_tolerance(prec, s_.p);
  }
  bool repeatable() const override { return true; }
};

// Which gradients a backward case asks for: all, or one of two partial sets that leave whole
// kernels (or their branches) out on CUDA.
enum class Wanted {
  kAll,
  kKeysAndValues,   // dk and dvalues: no dq, no v or g (the queries' kernel writes ds alone)
  kQueriesAndScale  // dq, dv and dg: no dk, no dvalues (the keys' kernel does not run)
};

class AdditiveBackward final : public AdditiveCase {
 public:
  // mode: the gradients of q, k and values (the values' in the other mode, as where they also
  // feed the keys' projection); param_mode: v's and g's.
  AdditiveBackward(const Setup& s, GradMode mode, GradMode param_mode, Wanted wanted = Wanted::kAll)
      : AdditiveCase(s), mode_(mode), param_mode_(param_mode), wanted_(wanted) {}
  std::string op() const override { return "additive_attention_backward"; }
  std::string params() const override {
    const char* only = wanted_ == Wanted::kKeysAndValues     ? "_only_keys_values"
                       : wanted_ == Wanted::kQueriesAndScale ? "_only_queries_scale"
                                                             : "";
    return name_of(s_.p) + "_" + mode_name(mode_) + "_params_" + mode_name(param_mode_) + only;
  }
  bool wants(std::size_t tensor) const {
    const bool keys_values = tensor == 10 || tensor == 11;
    if (wanted_ == Wanted::kKeysAndValues) return keys_values;
    if (wanted_ == Wanted::kQueriesAndScale) return !keys_values;
    return true;
  }
  // A gradient the case does not ask for: scratch, passed as undefined.
  HostTensor maybe(HostTensor t, std::size_t tensor) const {
    if (!wants(tensor)) t.role = Role::kScratch;
    return t;
  }
  Tensor given(std::span<const Tensor> t, std::size_t tensor) const {
    return wants(tensor) ? t[tensor] : Tensor{};
  }
  OpKind kind() const override { return OpKind::kAdditiveAttentionBackward; }
  GradMode values_mode() const {
    return mode_ == GradMode::kOverwrite ? GradMode::kAccumulate : GradMode::kOverwrite;
  }
  // q, k, values, v, g, lengths, dout, o and probs (the forward's, run first), dq, dk, dvalues,
  // dv, dg.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const AdditiveAttentionParams& p = s_.p;
    std::vector<HostTensor> t = inputs(611);
    t.push_back(input("dout", p.output_shape(), 617));
    HostTensor o = output("o", p.output_shape()),
               probs = output("probs", p.probs_shape(), Kind::kF32);
    o.role = probs.role = Role::kScratch;
    t.push_back(std::move(o));
    t.push_back(std::move(probs));
    t.push_back(maybe(grad_output("dq", p.query_shape(), mode_, 618), 9));
    t.push_back(maybe(grad_output("dk", p.key_shape(), mode_, 619), 10));
    t.push_back(maybe(grad_output("dvalues", p.value_shape(), values_mode(), 620), 11));
    t.push_back(maybe(grad_output("dv", {p.width}, param_mode_, 621), 12));
    HostTensor dg = grad_output("dg", {1}, param_mode_, 622);
    dg.kind = Kind::kF32;  // as g
    t.push_back(maybe(std::move(dg), 13));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.additive_attention_forward(s_.p, t[0], t[1], t[2], t[3], t[4], t[5], t[7], t[8]);
    backend::AdditiveAttentionGrads grads{given(t, 9), given(t, 10), given(t, 11), given(t, 12),
                                          given(t, 13)};
    grads.q_mode = grads.k_mode = mode_;
    grads.values_mode = values_mode();
    grads.param_mode = param_mode_;
    be.additive_attention_backward(s_.p, t[0], t[1], t[2], t[3], t[4], t[5], t[8], t[6], grads);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::AdditiveGrads g = ref::additive_attention_backward(
        s_.p, t[0].as_double(), t[1].as_double(), t[2].as_double(), t[3].as_double(),
        t[4].as_double(), s_.lengths, t[6].as_double());
    // The CPU reads the probabilities as forward rounded them to f32.
    const Tolerance tol = sum_tolerance(kF32, s_.p.queries + s_.p.keys, 4.0);
    const std::vector<Check> all = {{9, expected_grad(mode_, t[9], g.dq), tol},
                                    {10, expected_grad(mode_, t[10], g.dk), tol},
                                    {11, expected_grad(values_mode(), t[11], g.dvalues), tol},
                                    {12, expected_grad(param_mode_, t[12], g.dv), tol},
                                    {13, expected_grad(param_mode_, t[13], g.dg), tol}};
    std::vector<Check> checks;
    for (const Check& c : all)
      if (wants(c.tensor)) checks.push_back(c);
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return grad_tolerance(prec, s_.p, tensor >= 12);
  }
  bool repeatable() const override { return true; }
  double flops() const override { return 3.0 * AdditiveCase::flops(); }

 private:
  GradMode mode_, param_mode_;
  Wanted wanted_;
};

CaseList cases() {
  CaseList out;
  // GNMT's attention at batch 128 and 50 tokens, 1024 wide, sources of mixed lengths.
  std::vector<std::int32_t> lengths(128);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    lengths[b] = static_cast<std::int32_t>(50 - b % 40);
  const Setup gnmt = setup(128, 50, 50, 1024, 1024, lengths);
  out.push_back(std::make_unique<PerfCase>(std::make_unique<AdditiveForward>(gnmt)));
  out.push_back(std::make_unique<PerfCase>(
      std::make_unique<AdditiveBackward>(gnmt, GradMode::kOverwrite, GradMode::kOverwrite)));
  for (const Setup& s : setups()) {
    out.push_back(std::make_unique<AdditiveForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      for (GradMode pm : {GradMode::kOverwrite, GradMode::kAccumulate})
        out.push_back(std::make_unique<AdditiveBackward>(s, m, pm));
    for (Wanted w : {Wanted::kKeysAndValues, Wanted::kQueriesAndScale})
      out.push_back(
          std::make_unique<AdditiveBackward>(s, GradMode::kOverwrite, GradMode::kOverwrite, w));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

// Every gradient of a small case with one sample shorter than the keys.
std::vector<GradCase> grad_cases() {
  const Setup s = setup(2, 2, 3, 3, 2, {3, 2});
  const AdditiveAttentionParams p = s.p;
  GradCase g;
  g.op = "additive_attention";
  g.params = name_of(p);
  g.kind = OpKind::kAdditiveAttentionBackward;
  g.op_params = p;
  g.tensors = {input("q", p.query_shape(), 631),
               input("k", p.key_shape(), 632),
               input("values", p.value_shape(), 633),
               input("v", {p.width}, 634),
               input("g", {1}, 635, Kind::kF32),
               i32_input("lengths", s.lengths),
               input("dout", p.output_shape(), 636),
               output("o", p.output_shape()),
               output("probs", p.probs_shape(), Kind::kF32),
               output("dq", p.query_shape()),
               output("dk", p.key_shape()),
               output("dvalues", p.value_shape()),
               output("dv", {p.width}),
               output("dg", {1}, Kind::kF32)};
  g.wrt = {{0, 9}, {1, 10}, {2, 11}, {3, 12}, {4, 13}};
  g.weight = 6;
  const std::vector<std::int32_t> lengths = s.lengths;
  g.forward = [p, lengths](const std::vector<Vec>& t) {
    return ref::additive_attention_forward(p, t[0], t[1], t[2], t[3], t[4], lengths).o;
  };
  g.reference_backward = [p, lengths](const std::vector<Vec>& t) {
    const ref::AdditiveGrads r =
        ref::additive_attention_backward(p, t[0], t[1], t[2], t[3], t[4], lengths, t[6]);
    return std::vector<Vec>{r.dq, r.dk, r.dvalues, r.dv, r.dg};
  };
  g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
    be.additive_attention_forward(p, t[0], t[1], t[2], t[3], t[4], t[5], t[7], t[8]);
    be.additive_attention_backward(p, t[0], t[1], t[2], t[3], t[4], t[5], t[8], t[6],
                                   {t[9], t[10], t[11], t[12], t[13]});
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
