// The Transformer's embedding tail, y (mode)= scale x + (encode ? PE(r % sequence, c) : 0): the
// CPU backend against the float64 reference, every other backend against the CPU in every float
// dtype, with the encoding (the forward) and without it (its backward, dx = scale dy), in both
// gradient modes, and in place (y = x). Shapes: one position, a short sequence, the
// Transformer's 64 positions by 1024 columns, the narrowest width (2: one frequency, 1) and a
// long sequence (512 positions: angles far outside [-pi, pi]).
#include <cmath>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;
using backend::PositionalEncodingParams;

struct EncodingShape {
  std::int64_t sequence, width, batches;
  std::int64_t rows() const { return sequence * batches; }
};

const std::vector<EncodingShape> kShapes = {{1, 2, 3},  {7, 8, 3},     {7, 1024, 2},
                                            {64, 2, 2}, {64, 1024, 2}, {512, 16, 2}};

// The f32 angle pos w_j carries a few ulps of relative error on each side (the step's and the
// product's roundings, expf and sinf of up to 2 ulps on CUDA, under 1 in glibc), so the
// encoding's absolute error grows with the position up to sequence - 1: kAngleUlps * 2^-24 *
// (sequence - 1) covers both sides with room. The sum scale x + PE (+ y) then rounds like an f32
// elementwise result of magnitude scale + 2 (|x|, |y| <= 1, |PE| <= 1); f16 and bf16 only add
// the output's rounding.
constexpr double kAngleUlps = 8;

Tolerance encoding_tolerance(const Precision& prec, const EncodingShape& s, float scale) {
  const double unit_roundoff = std::ldexp(1.0, -24);
  const double magnitude = std::fabs(static_cast<double>(scale)) + 2.0;
  const double angle = kAngleUlps * unit_roundoff * static_cast<double>(s.sequence - 1);
  if (prec.dtype == DType::kF32)
    return {kElementwise.atol + angle + 2 * unit_roundoff * magnitude, kElementwise.rtol};
  Tolerance t = sum_tolerance(prec, 1, magnitude);
  t.atol += angle;
  return t;
}

// Overwriting or accumulating into y, or overwriting x itself.
enum class Target { kOverwrite, kAccumulate, kInPlace };

const char* target_name(Target t) {
  switch (t) {
    case Target::kOverwrite:
      return "overwrite";
    case Target::kAccumulate:
      return "accumulate";
    case Target::kInPlace:
      return "inplace";
  }
  return "?";
}

class PositionalEncoding final : public OpCase {
 public:
  PositionalEncoding(EncodingShape s, bool encode, Target target) : s_(s), target_(target) {
    p_.sequence = s.sequence;
    p_.scale = static_cast<float>(std::sqrt(static_cast<double>(s.width)));  // the Transformer's
    p_.encode = encode;
  }
  std::string op() const override { return "positional_encoding"; }
  std::string params() const override {
    std::ostringstream o;
    o << s_.batches << "x" << s_.sequence << "x" << s_.width << "_scale" << p_.scale << "_"
      << (p_.encode ? "encode" : "plain") << "_" << target_name(target_);
    return o.str();
  }
  OpKind kind() const override { return OpKind::kPositionalEncoding; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const Shape shape{s_.rows(), s_.width};
    HostTensor x = input("x", shape, 131);
    if (target_ == Target::kInPlace) {
      x.role = Role::kInOut;
      return {x};
    }
    return {x, grad_output("y", shape, mode(), 132)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.positional_encoding(p_, t[0], t.back(), mode());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec y = ref::positional_encoding(p_, s_.width, t[0].as_double());
    const std::size_t out = t.size() - 1;
    return {{out, expected_grad(mode(), t[out], y), encoding_tolerance(kF32, s_, p_.scale)}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return encoding_tolerance(prec, s_, p_.scale);
  }
  // Elementwise, no atomics: training's repeatability rests on it.
  bool repeatable() const override { return true; }

 private:
  GradMode mode() const {
    return target_ == Target::kAccumulate ? GradMode::kAccumulate : GradMode::kOverwrite;
  }

  EncodingShape s_;
  Target target_;
  PositionalEncodingParams p_;
};

CaseList cases() {
  CaseList out;
  for (const EncodingShape& s : kShapes)
    for (bool encode : {true, false})
      for (Target t : {Target::kOverwrite, Target::kAccumulate, Target::kInPlace})
        out.push_back(std::make_unique<PositionalEncoding>(s, encode, t));
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
