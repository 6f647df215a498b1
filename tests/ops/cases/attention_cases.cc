// Scaled dot-product attention forward and backward (both gradient modes): the CPU backend
// against the float64 reference, every other backend against the CPU in every float dtype, and
// finite differences of the reference forward. The shapes cover padding (a sample of length 0
// among them), the causal mask, cross-attention (queries and keys of different lengths), odd head
// widths, rows longer than a warp's lanes, and BERT's heads.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference_attention.h"

namespace dlbench::op_harness {
namespace {

using backend::AttentionKernel;
using backend::AttentionParams;
using backend::OpKind;

// A shape and its masks; empty lengths: every position.
struct Setup {
  AttentionParams p;
  std::vector<std::int32_t> q_lengths, kv_lengths;
};

Setup setup(std::int64_t batch, std::int64_t heads, std::int64_t seq_q, std::int64_t seq_kv,
            std::int64_t head_dim, bool causal, std::vector<std::int32_t> q_lengths = {},
            std::vector<std::int32_t> kv_lengths = {}, float scale = 0) {
  Setup s;
  s.p.batch = batch, s.p.heads = heads, s.p.seq_q = seq_q, s.p.seq_kv = seq_kv;
  s.p.head_dim = head_dim, s.p.causal = causal;
  s.p.scale =
      scale != 0 ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  s.q_lengths = std::move(q_lengths);
  s.kv_lengths = std::move(kv_lengths);
  return s;
}

const std::vector<Setup>& setups() {
  static const std::vector<Setup> all = {
      setup(2, 2, 5, 5, 4, false, {}, {}, 1.0f),  // peaked rows: scale 1 on unit-sized values
      setup(3, 2, 7, 7, 8, false, {7, 4, 1}, {7, 4, 1}),
      setup(3, 1, 6, 6, 8, false, {6, 0, 3}, {6, 0, 3}),  // a sample of no tokens
      setup(2, 3, 9, 9, 16, true, {9, 6}, {9, 6}),
      setup(2, 2, 6, 11, 8, false, {6, 2}, {11, 5}),  // cross-attention
      setup(2, 2, 6, 11, 8, false, {6, 3}, {11, 0}),  // queries over no keys: o and stats 0
      setup(2, 2, 4, 4, 5, true),                     // a head width of no power of two
      setup(2, 2, 5, 8, 8, true, {5, 3}, {8, 6}),     // causal cross-attention: top-left
      setup(2, 4, 130, 130, 64, false, {130, 77}, {130, 77}),
      setup(1, 12, 64, 64, 64, false),  // BERT-base's heads
      // Widths the fused CUDA kernels take (f16, bf16): tiles of 64 cut by lengths, a sample
      // of no tokens, causal self- and cross-attention, keys past a tile's end.
      setup(3, 2, 100, 100, 64, true, {100, 0, 37}, {100, 0, 37}),
      setup(2, 2, 70, 150, 32, true, {70, 9}, {150, 66}),
      setup(2, 3, 65, 129, 128, false, {40, 65}, {129, 1}),
  };
  return all;
}

// The setups again with each implementation named that takes them (a named one that cannot
// run fails the case, so these prove it ran): the unfused reference path for every setup (the
// plain setups run the backend's own choice, kAuto, which on CUDA is cuDNN's where it can),
// cuDNN's fused attention where cuDNN takes the call (head widths a multiple of 8 up to 128),
// and our flash kernels at their head widths.
std::vector<Setup> named_kernels(const std::vector<Setup>& setups) {
  std::vector<Setup> out;
  auto with = [&](Setup s, AttentionKernel kernel) {
    s.p.kernel = kernel;
    out.push_back(std::move(s));
  };
  for (const Setup& s : setups) {
    with(s, AttentionKernel::kUnfused);
    if (s.p.head_dim % 8 == 0 && s.p.head_dim <= 128) with(s, AttentionKernel::kCudnn);
    if (s.p.head_dim == 32 || s.p.head_dim == 64 || s.p.head_dim == 128)
      with(s, AttentionKernel::kFlash);
  }
  return out;
}

// Whether a sample has queries but no keys (its queries see nothing: o and stats 0).
bool keyless(const Setup& s) {
  for (std::size_t n = 0; n < s.kv_lengths.size(); ++n)
    if (s.kv_lengths[n] == 0 && s.q_lengths[n] > 0) return true;
  return false;
}

std::string name_of(const Setup& s) {
  std::ostringstream o;
  o << "b" << s.p.batch << "_h" << s.p.heads << "_q" << s.p.seq_q << "_kv" << s.p.seq_kv << "_d"
    << s.p.head_dim << (s.p.causal ? "_causal" : "") << (s.q_lengths.empty() ? "" : "_padded")
    << (keyless(s) ? "_keyless" : "")
    << (s.p.kernel == AttentionKernel::kAuto ? "" : std::string("_") + to_string(s.p.kernel));
  return o.str();
}

Shape q_shape(const AttentionParams& p) {
  return {p.batch * p.seq_q, p.width()};
}
Shape kv_shape(const AttentionParams& p) {
  return {p.batch * p.seq_kv, p.width()};
}
Shape stats_shape(const AttentionParams& p) {
  return {p.batch, p.heads, p.seq_q};
}

// The lengths as i32 inputs (every position where the setup has none: run() then passes no
// tensor, so the op's own full-length path runs).
HostTensor lengths(const char* name, const std::vector<std::int32_t>& given, std::int64_t batch,
                   std::int64_t seq) {
  return i32_input(name, given.empty() ? std::vector<std::int32_t>(batch, seq) : given);
}

// Against the CPU: scores are sums of head_dim products (f32 on every backend, TF32's inputs
// rounded), the outputs and gradients sums over the keys and queries, in f16 and bf16 with the
// probabilities and their gradients rounded to the dtype before their products.
Tolerance attention_tolerance(const Precision& prec, const AttentionParams& p) {
  return sum_tolerance(prec, p.head_dim + p.seq_q + p.seq_kv, 2.0);
}
// The statistics are f32 sums of f32 scores in every dtype (the inputs being the same rounded
// values on both sides), TF32 aside.
Tolerance stats_tolerance(const Precision& prec, const AttentionParams& p) {
  const double magnitude = std::abs(p.scale) * static_cast<double>(p.head_dim) + 8.0;
  return prec.math == MathMode::kTf32 ? sum_tolerance(prec, p.head_dim, magnitude)
                                      : sum_tolerance(kF32, p.head_dim + p.seq_kv, magnitude);
}

class AttentionCase : public OpCase {
 protected:
  explicit AttentionCase(const Setup& s) : s_(s) {}
  bool has_math_mode() const override { return true; }
  backend::OpParams op_params(const Precision& prec) const override {
    AttentionParams p = s_.p;
    p.math = prec.math;
    return p;
  }
  AttentionParams params_at(const Precision& prec) const {
    return std::get<AttentionParams>(op_params(prec));
  }
  Tensor maybe(const Tensor& t, const std::vector<std::int32_t>& given) const {
    return given.empty() ? Tensor{} : t;
  }
  double flops() const override { return 2.0 * static_cast<double>(s_.p.macs()); }
  Setup s_;
};

class AttentionForward final : public AttentionCase {
 public:
  explicit AttentionForward(const Setup& s) : AttentionCase(s) {}
  std::string op() const override { return "attention_forward"; }
  std::string params() const override { return name_of(s_); }
  OpKind kind() const override { return OpKind::kAttentionForward; }
  // q, k, v, q_lengths, kv_lengths, o, stats.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const AttentionParams& p = s_.p;
    return {input("q", q_shape(p), 301),
            input("k", kv_shape(p), 302),
            input("v", kv_shape(p), 303),
            lengths("q_lengths", s_.q_lengths, p.batch, p.seq_q),
            lengths("kv_lengths", s_.kv_lengths, p.batch, p.seq_kv),
            output("o", q_shape(p)),
            output("stats", stats_shape(p), Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.attention_forward(params_at(prec), t[0], t[1], t[2], maybe(t[3], s_.q_lengths),
                         maybe(t[4], s_.kv_lengths), t[5], t[6]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::AttentionForward f = ref::attention_forward(
        s_.p, t[0].as_double(), t[1].as_double(), t[2].as_double(), s_.q_lengths, s_.kv_lengths);
    return {{5, f.o, kElementwise}, {6, f.stats, kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return tensor == 6 ? stats_tolerance(prec, s_.p) : attention_tolerance(prec, s_.p);
  }
  bool repeatable() const override { return true; }
};

class AttentionBackward final : public AttentionCase {
 public:
  // perf: o and stats random rather than the reference forward's (too slow at BERT's sizes; the
  // timing does not depend on the values).
  AttentionBackward(const Setup& s, GradMode mode, bool perf = false)
      : AttentionCase(s), mode_(mode), perf_(perf) {}
  std::string op() const override { return "attention_backward"; }
  std::string params() const override { return name_of(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kAttentionBackward; }
  // q, k, v, o and stats (the reference forward's), dout, the lengths, dq, dk, dv.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const AttentionParams& p = s_.p;
    HostTensor q = input("q", q_shape(p), 311), k = input("k", kv_shape(p), 312),
               v = input("v", kv_shape(p), 313);
    const ref::AttentionForward f =
        perf_
            ? ref::AttentionForward{input("o", q_shape(p), 318).as_double(),
                                    Vec(static_cast<std::size_t>(p.batch * p.heads * p.seq_q), 1.0)}
            : ref::attention_forward(p, q.as_double(), k.as_double(), v.as_double(), s_.q_lengths,
                                     s_.kv_lengths);
    auto from = [](const char* name, const Shape& shape, Kind kind, const Vec& values) {
      return HostTensor{name, shape, Role::kIn, kind,
                        std::vector<float>(values.begin(), values.end())};
    };
    return {std::move(q),
            std::move(k),
            std::move(v),
            from("o", q_shape(p), Kind::kCompute, f.o),
            input("dout", q_shape(p), 314),
            from("stats", stats_shape(p), Kind::kF32, f.stats),
            lengths("q_lengths", s_.q_lengths, p.batch, p.seq_q),
            lengths("kv_lengths", s_.kv_lengths, p.batch, p.seq_kv),
            grad_output("dq", q_shape(p), mode_, 315),
            grad_output("dk", kv_shape(p), mode_, 316),
            grad_output("dv", kv_shape(p), mode_, 317)};
  }
  void run(backend::Backend& be, const Precision& prec, std::span<const Tensor> t) const override {
    be.attention_backward(params_at(prec), t[0], t[1], t[2], t[3], t[4], t[5],
                          maybe(t[6], s_.q_lengths), maybe(t[7], s_.kv_lengths), t[8], t[9], t[10],
                          mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::AttentionGrads g =
        ref::attention_backward(s_.p, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                t[4].as_double(), s_.q_lengths, s_.kv_lengths);
    // The CPU recomputes the probabilities from the statistics as rounded to f32.
    const Tolerance tol = sum_tolerance(kF32, s_.p.seq_q + s_.p.seq_kv, 4.0);
    return {{8, expected_grad(mode_, t[8], g.dq), tol},
            {9, expected_grad(mode_, t[9], g.dk), tol},
            {10, expected_grad(mode_, t[10], g.dv), tol}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return attention_tolerance(prec, s_.p);
  }
  // The fused backwards (cuDNN's, which kAuto takes where it can, and ours) sum dq with atomics
  // in whatever order their blocks run.
  bool repeatable() const override { return s_.p.kernel == AttentionKernel::kUnfused; }
  double flops() const override { return 2.5 * AttentionCase::flops(); }

 private:
  GradMode mode_;
  bool perf_;
};

CaseList cases() {
  CaseList out;
  // BERT-base at sequence 128 and batch 64, and BERT-large's phase 2 (sequence 512) at batch 8.
  std::vector<Setup> perf = {setup(64, 12, 128, 128, 64, false), setup(8, 16, 512, 512, 64, false)};
  for (const Setup& s : named_kernels(perf)) perf.push_back(s);
  for (const Setup& s : perf) {
    out.push_back(std::make_unique<PerfCase>(std::make_unique<AttentionForward>(s)));
    out.push_back(std::make_unique<PerfCase>(
        std::make_unique<AttentionBackward>(s, GradMode::kOverwrite, true)));
  }
  std::vector<Setup> all = setups();
  for (const Setup& s : named_kernels(setups())) all.push_back(s);
  for (const Setup& s : all) {
    out.push_back(std::make_unique<AttentionForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      if (m == GradMode::kOverwrite || s.p.kernel != AttentionKernel::kCudnn)  // cuDNN overwrites
        out.push_back(std::make_unique<AttentionBackward>(s, m));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

// dq, dk and dv through the forward's o, with padding and a causal mask (so masked keys must
// get no gradient), and cross-attention.
std::vector<GradCase> grad_cases() {
  std::vector<GradCase> out;
  for (const Setup& s : {setup(2, 2, 5, 5, 4, true, {5, 3}, {5, 3}, 1.0f),
                         setup(2, 1, 3, 6, 4, false, {3, 2}, {6, 4})}) {
    const AttentionParams p = s.p;
    GradCase g;
    g.op = "attention";
    g.params = name_of(s);
    g.kind = OpKind::kAttentionBackward;
    g.op_params = p;
    g.tensors = {input("q", q_shape(p), 321),
                 input("k", kv_shape(p), 322),
                 input("v", kv_shape(p), 323),
                 input("dout", q_shape(p), 324),
                 lengths("q_lengths", s.q_lengths, p.batch, p.seq_q),
                 lengths("kv_lengths", s.kv_lengths, p.batch, p.seq_kv),
                 output("o", q_shape(p)),
                 output("stats", stats_shape(p), Kind::kF32),
                 output("dq", q_shape(p)),
                 output("dk", kv_shape(p)),
                 output("dv", kv_shape(p))};
    g.wrt = {{0, 8}, {1, 9}, {2, 10}};
    g.weight = 3;
    g.forward = [s](const std::vector<Vec>& t) {
      return ref::attention_forward(s.p, t[0], t[1], t[2], s.q_lengths, s.kv_lengths).o;
    };
    g.reference_backward = [s](const std::vector<Vec>& t) {
      const ref::AttentionGrads r =
          ref::attention_backward(s.p, t[0], t[1], t[2], t[3], s.q_lengths, s.kv_lengths);
      return std::vector<Vec>{r.dq, r.dk, r.dv};
    };
    g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
      be.attention_forward(p, t[0], t[1], t[2], t[4], t[5], t[6], t[7]);
      be.attention_backward(p, t[0], t[1], t[2], t[6], t[3], t[7], t[4], t[5], t[8], t[9], t[10],
                            GradMode::kOverwrite);
    };
    out.push_back(std::move(g));
  }
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
