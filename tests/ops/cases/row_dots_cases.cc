// Each row against its own candidate rows (Word2Vec's scores of a word against its context and
// its negatives) and the two gradients: the CPU backend against float64 references, other
// backends against the CPU; finite differences of the forward for both inputs.
#include <sstream>

#include "tests/ops/harness/op_case.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;

struct Dots {
  std::int64_t n, m, d;
};

std::string name(const Dots& s) {
  std::ostringstream o;
  o << "n" << s.n << "_m" << s.m << "_d" << s.d;
  return o.str();
}

Vec forward(const Dots& s, const Vec& a, const Vec& c) {
  Vec y(static_cast<std::size_t>(s.n * s.m), 0.0);
  for (std::int64_t r = 0; r < s.n * s.m; ++r)
    for (std::int64_t k = 0; k < s.d; ++k)
      y[static_cast<std::size_t>(r)] += a[static_cast<std::size_t>((r / s.m) * s.d + k)] *
                                        c[static_cast<std::size_t>(r * s.d + k)];
  return y;
}

Vec grad_a(const Dots& s, const Vec& c, const Vec& dy) {
  Vec da(static_cast<std::size_t>(s.n * s.d), 0.0);
  for (std::int64_t r = 0; r < s.n * s.m; ++r)
    for (std::int64_t k = 0; k < s.d; ++k)
      da[static_cast<std::size_t>((r / s.m) * s.d + k)] +=
          dy[static_cast<std::size_t>(r)] * c[static_cast<std::size_t>(r * s.d + k)];
  return da;
}

Vec grad_c(const Dots& s, const Vec& a, const Vec& dy) {
  Vec dc(static_cast<std::size_t>(s.n * s.m * s.d));
  for (std::int64_t r = 0; r < s.n * s.m; ++r)
    for (std::int64_t k = 0; k < s.d; ++k)
      dc[static_cast<std::size_t>(r * s.d + k)] =
          dy[static_cast<std::size_t>(r)] * a[static_cast<std::size_t>((r / s.m) * s.d + k)];
  return dc;
}

class RowDotsForward final : public OpCase {
 public:
  explicit RowDotsForward(Dots s) : s_(s) {}
  std::string op() const override { return "row_dots_forward"; }
  std::string params() const override { return name(s_); }
  OpKind kind() const override { return OpKind::kRowDotsForward; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("a", {s_.n, s_.d}, 401), input("c", {s_.n * s_.m, s_.d}, 402),
            output("y", {s_.n, s_.m})};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.row_dots_forward(t[0], t[1], t[2]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    return {{2, forward(s_, t[0].as_double(), t[1].as_double()), sum_tolerance(s_.d)}};
  }
  Tolerance against_cpu(const Precision& p, std::size_t) const override {
    return sum_tolerance(p, s_.d);
  }

 private:
  Dots s_;
};

// Both gradients in one mode, or one of them alone (the other undefined).
class RowDotsBackward final : public OpCase {
 public:
  RowDotsBackward(Dots s, GradMode mode, bool with_da, bool with_dc)
      : s_(s), mode_(mode), da_(with_da), dc_(with_dc) {}
  std::string op() const override { return "row_dots_backward"; }
  std::string params() const override {
    return name(s_) + "_" + mode_name(mode_) + (da_ ? "" : "_no_da") + (dc_ ? "" : "_no_dc");
  }
  OpKind kind() const override { return OpKind::kRowDotsBackward; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    return {input("a", {s_.n, s_.d}, 411), input("c", {s_.n * s_.m, s_.d}, 412),
            input("dy", {s_.n, s_.m}, 413), grad_output("da", {s_.n, s_.d}, mode_, 414),
            grad_output("dc", {s_.n * s_.m, s_.d}, mode_, 415)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.row_dots_backward(t[0], t[1], t[2], da_ ? t[3] : Tensor(), mode_, dc_ ? t[4] : Tensor(),
                         mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    std::vector<Check> checks;
    if (da_)
      checks.push_back({3,
                        expected_grad(mode_, t[3], grad_a(s_, t[1].as_double(), t[2].as_double())),
                        sum_tolerance(s_.m + 1)});
    if (dc_)
      checks.push_back({4,
                        expected_grad(mode_, t[4], grad_c(s_, t[0].as_double(), t[2].as_double())),
                        sum_tolerance(2)});
    return checks;
  }
  Tolerance against_cpu(const Precision& p, std::size_t tensor) const override {
    return sum_tolerance(p, tensor == 3 ? s_.m + 1 : 2);
  }
  // An undefined gradient is not written: its starting values stay (the single-gradient cases
  // accumulate, so there are values to keep).
  std::vector<Unchanged> unchanged() const override {
    std::vector<Unchanged> out;
    auto all = [](std::int64_t count) {
      std::vector<std::size_t> e(static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < e.size(); ++i) e[i] = i;
      return e;
    };
    if (!da_) out.push_back({3, all(s_.n * s_.d)});
    if (!dc_) out.push_back({4, all(s_.n * s_.m * s_.d)});
    return out;
  }

 private:
  Dots s_;
  GradMode mode_;
  bool da_, dc_;
};

CaseList cases() {
  CaseList list;
  // One candidate; Word2Vec's 1 + 5 at dimension 128; a row longer than a warp's stride; a
  // width under a warp; and enough rows for many blocks on a GPU.
  for (const Dots& s :
       std::vector<Dots>{{3, 1, 5}, {4, 6, 128}, {2, 3, 300}, {5, 65, 7}, {700, 6, 33}}) {
    list.push_back(std::make_unique<RowDotsForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      list.push_back(std::make_unique<RowDotsBackward>(s, m, true, true));
  }
  list.push_back(
      std::make_unique<RowDotsBackward>(Dots{4, 6, 16}, GradMode::kAccumulate, true, false));
  list.push_back(
      std::make_unique<RowDotsBackward>(Dots{4, 6, 16}, GradMode::kAccumulate, false, true));
  return list;
}
DLBENCH_OP_CASES(cases);

// L = sum_ij y[i, j] r[i, j]: the gradients of a and of c by central differences.
std::vector<GradCase> grad_cases() {
  const Dots s{3, 4, 5};
  GradCase g;
  g.op = "row_dots";
  g.params = name(s);
  g.kind = OpKind::kRowDotsBackward;
  g.tensors = {input("a", {s.n, s.d}, 421), input("c", {s.n * s.m, s.d}, 422),
               input("dy", {s.n, s.m}, 423), output("da", {s.n, s.d}),
               output("dc", {s.n * s.m, s.d})};
  g.wrt = {{0, 3}, {1, 4}};
  g.weight = 2;
  g.forward = [s](const std::vector<Vec>& t) { return forward(s, t[0], t[1]); };
  g.reference_backward = [s](const std::vector<Vec>& t) {
    return std::vector<Vec>{grad_a(s, t[1], t[2]), grad_c(s, t[0], t[2])};
  };
  g.backward = [](backend::Backend& be, std::span<const Tensor> t) {
    be.row_dots_backward(t[0], t[1], t[2], t[3], GradMode::kOverwrite, t[4], GradMode::kOverwrite);
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
