// Max and average pooling forward and backward: the CPU backend against the float64
// reference, every other backend against the CPU (forward) or the reference (backward, where
// ties may go to another element than the CPU's) in every float dtype and both gradient
// modes; and finite differences of the forward.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;
using backend::PoolKind;
using backend::PoolParams;

PoolParams pool(PoolKind kind, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                int window, int stride, int pad) {
  PoolParams p;
  p.kind = kind, p.n = n, p.h = h, p.w = w, p.c = c;
  p.window_h = p.window_w = window, p.stride_h = p.stride_w = stride, p.pad_h = p.pad_w = pad;
  return p;
}

// The same window, stride and padding along all three axes of an NDHWC volume.
PoolParams pool3(PoolKind kind, std::int64_t n, std::int64_t d, std::int64_t h, std::int64_t w,
                 std::int64_t c, int window, int stride, int pad) {
  PoolParams p = pool(kind, n, h, w, c, window, stride, pad);
  p.spatial_dims = 3, p.d = d;
  p.window_d = window, p.stride_d = stride, p.pad_d = pad;
  return p;
}

// kRandom: random values (large cases, where rounding to f16/bf16 makes some ties too);
// kDistinct: no two equal values in an image channel; kTies: a handful of levels, so most
// windows hold their maximum more than once.
enum class Values { kRandom, kDistinct, kTies };

struct PoolShape {
  PoolParams p;
  Values values = Values::kRandom;
};

std::string name(const PoolShape& s) {
  const PoolParams& p = s.p;
  std::ostringstream o;
  o << (p.kind == PoolKind::kMax ? "max" : "avg") << "_n" << p.n << "_";
  if (p.volumetric()) o << p.d << "x";
  o << p.h << "x" << p.w << "x" << p.c << "_w";
  if (p.volumetric()) o << p.window_d << "x";
  o << p.window_h << "x" << p.window_w << "_s" << p.stride_h << "_p" << p.pad_h
    << (s.values == Values::kTies       ? "_ties"
        : s.values == Values::kDistinct ? "_distinct"
                                        : "");
  return o.str();
}

// ResNet's 3x3 s2 p1 stem pooling on even and odd sizes (overlapping windows), VGG's 2x2 s2,
// the average versions (padding excluded from the divisor), and ResNet's global average
// pooling; channel counts that take the 16-byte packs (8, 16, 64) and the one-channel path
// (3, 5, 10); ties; a 16x16 window (the largest a uint8 argmax indexes) and a 17x17 one
// (int32 argmax); 2x2/1 windows with padding and 3x3/2 ones padded by 2 (CUDA's thread per
// stride block, with the 3x3/2 p1 shapes), and 2x2/3 ones that skip inputs (the gather); VGG's
// pool1 at batch 2; and images with more rows than one grid's y dimension, one whose 2x2/2
// windows tile it (CUDA's thread per output) and one with an odd row left over (CUDA's gather). In
// 3D (NDHWC): 2x2x2/2 and overlapping 3x3x3 s2 p1 windows, max and average, on even and odd
// volumes, both pack widths, ties, distinct values, and a 7x7x7 window (343 positions: the int32
// argmax).
const std::vector<PoolShape> kShapes = {
    {pool3(PoolKind::kMax, 2, 8, 8, 8, 16, 2, 2, 0)},
    {pool3(PoolKind::kMax, 1, 7, 9, 6, 5, 3, 2, 1)},
    {pool3(PoolKind::kAverage, 2, 7, 6, 5, 8, 3, 2, 1)},
    {pool3(PoolKind::kAverage, 1, 4, 6, 8, 3, 2, 2, 0)},
    {pool3(PoolKind::kMax, 2, 4, 6, 6, 8, 3, 2, 1), Values::kDistinct},
    {pool3(PoolKind::kMax, 2, 5, 4, 6, 3, 2, 2, 0), Values::kDistinct},
    {pool3(PoolKind::kAverage, 1, 5, 5, 4, 8, 3, 1, 1), Values::kDistinct},
    {pool3(PoolKind::kMax, 2, 6, 6, 6, 8, 2, 2, 0), Values::kTies},
    {pool3(PoolKind::kMax, 1, 8, 8, 8, 3, 7, 1, 0)},
    {pool(PoolKind::kMax, 2, 12, 12, 8, 3, 2, 1)},
    {pool(PoolKind::kMax, 2, 11, 9, 5, 3, 2, 1)},
    {pool(PoolKind::kMax, 2, 8, 8, 16, 2, 2, 0)},
    {pool(PoolKind::kMax, 1, 7, 9, 3, 2, 2, 0)},
    {pool(PoolKind::kAverage, 2, 12, 12, 8, 3, 2, 1)},
    {pool(PoolKind::kAverage, 2, 11, 9, 5, 3, 2, 1)},
    {pool(PoolKind::kAverage, 2, 8, 8, 16, 2, 2, 0)},
    {PoolParams::global_average(2, 7, 7, 32)},
    {PoolParams::global_average(3, 4, 5, 6)},
    {pool(PoolKind::kMax, 2, 9, 9, 8, 3, 2, 1), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 12, 11, 64, 3, 2, 1), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 9, 10, 3, 3, 2, 1), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 8, 6, 5, 2, 2, 0), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 8, 8, 64, 2, 2, 0), Values::kDistinct},
    {pool(PoolKind::kMax, 3, 7, 9, 10, 2, 2, 0), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 9, 9, 10, 3, 2, 1), Values::kTies},
    {pool(PoolKind::kMax, 2, 10, 10, 16, 3, 2, 1), Values::kTies},
    {pool(PoolKind::kMax, 2, 8, 8, 64, 2, 2, 0), Values::kTies},
    {pool(PoolKind::kMax, 2, 16, 16, 8, 16, 16, 0), Values::kTies},
    {pool(PoolKind::kMax, 2, 20, 19, 3, 17, 1, 0), Values::kDistinct},
    {pool(PoolKind::kAverage, 2, 9, 9, 8, 3, 2, 1), Values::kDistinct},
    {pool(PoolKind::kAverage, 2, 7, 5, 3, 3, 1, 1), Values::kDistinct},
    {pool(PoolKind::kAverage, 2, 8, 8, 64, 2, 2, 0), Values::kDistinct},
    {PoolParams::global_average(2, 7, 7, 16), Values::kDistinct},
    {PoolParams::global_average(2, 7, 7, 2048)},
    {pool(PoolKind::kMax, 2, 7, 9, 8, 2, 1, 1), Values::kDistinct},
    {pool(PoolKind::kAverage, 2, 7, 9, 8, 2, 1, 1), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 10, 11, 8, 3, 2, 2), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 9, 8, 8, 2, 3, 0), Values::kDistinct},
    {pool(PoolKind::kMax, 2, 224, 224, 64, 2, 2, 0)},
    {pool(PoolKind::kMax, 2, 112, 112, 64, 3, 2, 1)},
    {pool(PoolKind::kMax, 1, 1100000, 2, 1, 2, 2, 0)},
    {pool(PoolKind::kMax, 1, 1100001, 2, 1, 2, 2, 0)},
};

// Values distinct within every image channel (a shuffled ramp over the D*H*W positions of each
// (n, c) slice, random signs, steps of at least 0.9/144 -- wider than a bf16 ulp in [0.5, 1]),
// so no window has two equal maxima after rounding.
std::vector<float> distinct_values(const PoolParams& p, std::uint64_t seed) {
  std::vector<float> t(static_cast<std::size_t>(p.input_shape().numel()));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution negative(0.5);
  const auto plane = static_cast<std::size_t>(p.d * p.h * p.w);
  const double step = 0.9 / static_cast<double>(plane);
  std::vector<std::size_t> order(plane);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t c = 0; c < p.c; ++c) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i = 0; i < plane; ++i) {
        const auto v = static_cast<float>(0.1 + step * static_cast<double>(order[i]));
        t[(static_cast<std::size_t>(n) * plane + i) * static_cast<std::size_t>(p.c) +
          static_cast<std::size_t>(c)] = negative(rng) ? -v : v;
      }
    }
  return t;
}

HostTensor pool_input(const PoolShape& s) {
  HostTensor x = input("x", s.p.input_shape(), 21);
  if (s.values == Values::kDistinct) x.data = distinct_values(s.p, 21);
  if (s.values == Values::kTies)
    for (float& v : x.data) v = std::round(v * 2.0f) / 2.0f;  // -1, -0.5, 0, 0.5, 1
  return x;
}

HostTensor workspace(const backend::Backend& be, const PoolParams& p) {
  const auto words = static_cast<std::int64_t>(be.pool_workspace_bytes(p) / sizeof(float) + 1);
  return {"workspace",
          {words},
          Role::kScratch,
          Kind::kF32,
          std::vector<float>(static_cast<std::size_t>(words), 0.0f)};
}

class PoolForward final : public OpCase {
 public:
  explicit PoolForward(PoolShape s) : s_(s) {}
  std::string op() const override { return "pool_forward"; }
  std::string params() const override { return name(s_); }
  OpKind kind() const override { return OpKind::kPoolForward; }
  backend::OpParams op_params(const Precision&) const override { return s_.p; }
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    return {pool_input(s_), output("y", s_.p.output_shape()), workspace(be, s_.p)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.pool_forward(s_.p, t[0], t[1], t[2]);
  }
  // Max pooling copies one input: exact. Average pooling is a short sum.
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Tolerance tol = s_.p.kind == PoolKind::kMax ? Tolerance{0, 0} : sum_tolerance(terms());
    return {{1, ref::pool_forward(s_.p, t[0].as_double()), tol}};
  }
  // Averages of k terms; the max is exact.
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return sum_tolerance(prec, terms());
  }

 private:
  std::int64_t terms() const { return std::int64_t{s_.p.window_h} * s_.p.window_w; }
  PoolShape s_;
};

// The backward reads the forward's output and workspace: run() runs the forward first.
class PoolBackward final : public OpCase {
 public:
  PoolBackward(PoolShape s, GradMode mode) : s_(s), mode_(mode) {}
  std::string op() const override { return "pool_backward"; }
  std::string params() const override { return name(s_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kPoolBackward; }
  backend::OpParams op_params(const Precision&) const override { return s_.p; }
  bool against_reference() const override { return true; }
  // Overwriting, each dx is written by one thread, its windows in a fixed order.
  bool repeatable() const override { return mode_ == GradMode::kOverwrite; }
  std::vector<HostTensor> tensors(const backend::Backend& be) const override {
    HostTensor y = output("y", s_.p.output_shape());
    y.role = Role::kScratch;
    return {pool_input(s_), y, input("dy", s_.p.output_shape(), 22), workspace(be, s_.p),
            grad_output("dx", s_.p.input_shape(), mode_, 23)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.pool_forward(s_.p, t[0], t[1], t[3]);
    be.pool_backward(s_.p, t[0], t[1], t[2], t[3], t[4], mode_);
  }
  // Overlapping windows (3x3 s2, 3x3x3 s2) add several gradients into one position.
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec dx = ref::pool_backward(s_.p, t[0].as_double(), t[2].as_double());
    return {{4, expected_grad(mode_, t[4], dx), sum_tolerance(27)}};
  }
  // Each dx sums at most ceil(window / stride) outputs per axis, plus the old dx when
  // accumulating.
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    const PoolParams& p = s_.p;
    const std::int64_t covers = ((p.window_d + p.stride_d - 1) / p.stride_d) *
                                ((p.window_h + p.stride_h - 1) / p.stride_h) *
                                ((p.window_w + p.stride_w - 1) / p.stride_w);
    return sum_tolerance(prec, covers + 1);
  }

 private:
  PoolShape s_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  // VGG16's pool1 and ResNet-50's stem pooling at kPerfBatch (backward runs the forward too).
  for (const PoolParams& p : {pool(PoolKind::kMax, kPerfBatch, 224, 224, 64, 2, 2, 0),
                              pool(PoolKind::kMax, kPerfBatch, 112, 112, 64, 3, 2, 1)}) {
    out.push_back(std::make_unique<PerfCase>(std::make_unique<PoolForward>(PoolShape{p})));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<PerfCase>(std::make_unique<PoolBackward>(PoolShape{p}, m)));
  }
  for (const PoolShape& s : kShapes) {
    out.push_back(std::make_unique<PoolForward>(s));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<PoolBackward>(s, m));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

// Random inputs have no ties, and a step of 1e-6 never changes which element wins.
std::vector<GradCase> grad_cases() {
  std::vector<GradCase> out;
  for (const PoolParams& p :
       {pool(PoolKind::kMax, 1, 5, 6, 2, 3, 2, 1), pool(PoolKind::kAverage, 1, 5, 6, 2, 3, 2, 1),
        pool3(PoolKind::kMax, 1, 4, 5, 4, 2, 3, 2, 1),
        pool3(PoolKind::kAverage, 1, 4, 5, 4, 2, 3, 2, 1)}) {
    GradCase g;
    g.op = "pool";
    g.params = name({p});
    g.kind = OpKind::kPoolBackward;
    g.op_params = p;
    // The workspace is sized for any backend (the CPU's and CUDA's are at most 4 bytes per
    // output element).
    const std::int64_t words = p.output_shape().numel() + 16;
    g.tensors = {input("x", p.input_shape(), 101),
                 input("dy", p.output_shape(), 102),
                 output("y", p.output_shape()),
                 {"workspace",
                  {words},
                  Role::kScratch,
                  Kind::kF32,
                  std::vector<float>(static_cast<std::size_t>(words), 0.0f)},
                 output("dx", p.input_shape())};
    g.wrt = {{0, 4}};
    g.weight = 1;
    g.forward = [p](const std::vector<Vec>& t) { return ref::pool_forward(p, t[0]); };
    g.reference_backward = [p](const std::vector<Vec>& t) {
      return std::vector<Vec>{ref::pool_backward(p, t[0], t[1])};
    };
    g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
      be.pool_forward(p, t[0], t[2], t[3]);
      be.pool_backward(p, t[0], t[2], t[1], t[3], t[4], GradMode::kOverwrite);
    };
    out.push_back(std::move(g));
  }
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
