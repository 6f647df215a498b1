// Sequences reversed within their lengths (the bidirectional LSTM's backward direction): the CPU
// backend against a reference written from the definition, every other backend against the CPU
// bit for bit (the op moves rows; an accumulating one adds once and rounds once). Lengths cover
// the whole sequence, one step, none, and a batch of mixed lengths; both gradient modes.
#include <sstream>

#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;
using backend::SequenceParams;

struct Setup {
  SequenceParams p;
  std::int64_t width;
  std::vector<std::int32_t> lengths;
};

const std::vector<Setup>& setups() {
  static const std::vector<Setup> all = {
      {{5, 1}, 3, {5}},
      {{4, 3}, 2, {4, 1, 0}},
      {{7, 4}, 9, {3, 7, 6, 2}},
      {{50, 16}, 24, {50, 49, 1, 2, 17, 33, 8, 50, 21, 40, 3, 12, 50, 30, 9, 44}},
  };
  return all;
}

class ReverseSequences final : public OpCase {
 public:
  ReverseSequences(const Setup& s, GradMode mode) : s_(s), mode_(mode) {}
  std::string op() const override { return "reverse_sequences"; }
  std::string params() const override {
    std::ostringstream o;
    o << "t" << s_.p.steps << "_b" << s_.p.batch << "_w" << s_.width << "_" << mode_name(mode_);
    return o.str();
  }
  OpKind kind() const override { return OpKind::kReverseSequences; }
  Shape shape() const { return {s_.p.steps * s_.p.batch, s_.width}; }
  // lengths, x, y.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {i32_input("lengths", s_.lengths), input("x", shape(), 501),
            grad_output("y", shape(), mode_, 502)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.reverse_sequences(s_.p, t[0], t[1], t[2], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int64_t steps = s_.p.steps, batch = s_.p.batch, w = s_.width;
    Vec y(static_cast<std::size_t>(steps * batch * w));
    for (std::int64_t t_ = 0; t_ < steps; ++t_)
      for (std::int64_t b = 0; b < batch; ++b) {
        const std::int64_t length = s_.lengths[b];
        const std::int64_t from = t_ < length ? length - 1 - t_ : t_;
        for (std::int64_t c = 0; c < w; ++c)
          y[(t_ * batch + b) * w + c] = t[1].data[(from * batch + b) * w + c];
      }
    return {{2, expected_grad(mode_, t[2], y), kElementwise}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return {0, 0}; }
  bool round_cpu_result() const override { return true; }
  bool repeatable() const override { return true; }

 private:
  Setup s_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  for (const Setup& s : setups())
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<ReverseSequences>(s, m));
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
