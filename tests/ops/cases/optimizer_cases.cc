// SGD with momentum, Adam/AdamW and sparse (lazy) Adam over a few steps: the CPU backend
// against the float64 reference, other backends against the CPU. Optimizer buffers are f32
// master copies on every backend, so other precisions are skipped as unsupported.
#include <limits>
#include <sstream>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::AdamParams;
using backend::OpKind;
using backend::SgdParams;

// f32 per element against float64: a few ulps; atol covers m near zero after cancellation.
constexpr Tolerance kAdamTolerance{1e-7, 1e-6};
constexpr Tolerance kAdamVTolerance{1e-12, 1e-6};

HostTensor f32(std::string name, Shape shape, std::uint64_t seed, Role role = Role::kIn) {
  HostTensor t = input(std::move(name), shape, seed, Kind::kF32);
  t.role = role;
  return t;
}

HostTensor f32_values(std::string name, Shape shape, std::vector<float> values) {
  return {std::move(name), shape, Role::kInOut, Kind::kF32, std::move(values)};
}

// The gradient of step k, "g<k>".
std::string step_name(int k) {
  std::string name = "g";
  name += std::to_string(k);
  return name;
}

std::string number(double v) {
  std::ostringstream o;
  o << v;
  std::string s = o.str();
  for (char& c : s)
    if (c == '.' || c == '-') c = c == '.' ? 'p' : 'm';
  return s;
}

// w, v (in-out), then one gradient per step.
class SgdMomentum final : public OpCase {
 public:
  SgdMomentum(std::int64_t size, SgdParams p, int steps) : size_(size), p_(p), steps_(steps) {}
  std::string op() const override { return "sgd_momentum_update"; }
  std::string params() const override {
    std::ostringstream o;
    o << "n" << size_ << "_lr" << number(p_.learning_rate) << "_m" << number(p_.momentum) << "_wd"
      << number(p_.weight_decay) << "_gs" << number(p_.grad_scale) << "_steps" << steps_;
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSgdMomentumUpdate; }
  backend::OpParams op_params(const Precision&) const override { return p_; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {f32("w", {size_}, 61, Role::kInOut),
                                 f32("velocity", {size_}, 62, Role::kInOut)};
    for (int s = 0; s < steps_; ++s)
      t.push_back(f32(step_name(s), {size_}, 63 + static_cast<std::uint64_t>(s)));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    for (int s = 0; s < steps_; ++s) be.sgd_momentum_update(p_, t[0], t[2 + s], t[1]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    ref::SgdState state{t[0].as_double(), t[1].as_double()};
    for (int s = 0; s < steps_; ++s)
      state = ref::sgd_momentum_update(p_, state.weights, t[2 + s].as_double(), state.velocity);
    return {{0, state.weights, kElementwise}, {1, state.velocity, kElementwise}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return kElementwise; }

 private:
  std::int64_t size_;
  SgdParams p_;
  int steps_;
};

AdamParams adam(float lr, float wd, bool decoupled, float grad_scale = 1.0f,
                float max_grad_norm = 0.0f) {
  AdamParams p;
  p.learning_rate = lr, p.weight_decay = wd, p.decoupled = decoupled, p.grad_scale = grad_scale;
  p.max_grad_norm = max_grad_norm;
  return p;
}

AdamParams with_epsilon(AdamParams p, float epsilon) {
  p.epsilon = epsilon;
  return p;
}

// The sum of squares a clipping case hands the update: as if the model's gradients had norm
// 40 (before grad_scale), so a max norm of 5 clips (by 1/8) and one of 50 does not.
constexpr float kClipSumSquares = 1600.0f;

// Three steps of Adam from zero moments (dense), or from a table that has already taken
// steps (sparse, touched rows only); the step counter lives on the device and each update
// increments it.
class AdamCase final : public OpCase {
 public:
  AdamCase(std::string name, AdamParams p, std::int64_t rows, std::int64_t cols, bool sparse)
      : name_(std::move(name)), p_(p), rows_(rows), cols_(cols), sparse_(sparse) {}
  std::string op() const override { return sparse_ ? "sparse_adam_update" : "adam_update"; }
  std::string params() const override {
    std::ostringstream o;
    o << name_ << "_" << rows_ << "x" << cols_;
    return o.str();
  }
  OpKind kind() const override { return sparse_ ? OpKind::kSparseAdamUpdate : OpKind::kAdamUpdate; }
  backend::OpParams op_params(const Precision&) const override { return p_; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const Shape s{rows_, cols_};
    const auto n = static_cast<std::size_t>(rows_ * cols_);
    std::vector<HostTensor> t = {
        f32_values("step", {1}, {static_cast<float>(first_step() - 1)}),
        f32("w", s, 301, Role::kInOut),
        sparse_ ? f32_values("m", s, positive_values(rows_ * cols_, 312, 0.0f, 0.1f))
                : f32_values("m", s, std::vector<float>(n, 0.0f)),
        sparse_ ? f32_values("v", s, positive_values(rows_ * cols_, 313, 0.0f, 0.01f))
                : f32_values("v", s, std::vector<float>(n, 0.0f)),
        {"touched", {rows_}, Role::kIn, Kind::kI32, touched()}};
    t[0].kind = Kind::kI32;
    for (int k = 0; k < kSteps; ++k)
      t.push_back(f32(step_name(k), s, 302 + static_cast<std::uint64_t>(k)));
    t.push_back(f32_values("sum_squares", {1}, {kClipSumSquares}));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    const Tensor clip = p_.max_grad_norm > 0 ? t[5 + kSteps] : Tensor{};
    for (int k = 0; k < kSteps; ++k) {
      if (sparse_)
        be.sparse_adam_update(p_, t[0], t[1], t[5 + k], t[2], t[3], t[4], clip);
      else
        be.adam_update(p_, t[0], t[1], t[5 + k], t[2], t[3], clip);
    }
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    ref::AdamState state{t[1].as_double(), t[2].as_double(), t[3].as_double()};
    const std::vector<std::int32_t> marks(t[4].data.begin(), t[4].data.end());
    for (int k = 0; k < kSteps; ++k)
      state = ref::adam_update(p_, first_step() + k, state, t[5 + k].as_double(), rows_,
                               sparse_ ? marks : std::vector<std::int32_t>{}, kClipSumSquares);
    return {{0, {static_cast<double>(first_step() + kSteps - 1)}, {0, 0}},
            {1, state.weights, kAdamTolerance},
            {2, state.m, kAdamTolerance},
            {3, state.v, kAdamVTolerance}};
  }
  // A lazy update leaves the rows no id touched exactly as they were: weights and moments.
  std::vector<Unchanged> unchanged() const override {
    if (!sparse_) return {};
    std::vector<std::size_t> elements;
    const std::vector<float> marks = touched();
    for (std::int64_t r = 0; r < rows_; ++r)
      if (marks[static_cast<std::size_t>(r)] == 0.0f)
        for (std::int64_t col = 0; col < cols_; ++col)
          elements.push_back(static_cast<std::size_t>(r * cols_ + col));
    return {{1, elements}, {2, elements}, {3, elements}};
  }
  // The CPU and CUDA powf of the bias corrections may differ by an ulp: rtol 1e-6.
  Tolerance against_cpu(const Precision&, std::size_t tensor) const override {
    return tensor == 0 ? Tolerance{0, 0} : tensor == 3 ? kAdamVTolerance : kAdamTolerance;
  }

 private:
  static constexpr int kSteps = 3;
  int first_step() const { return sparse_ ? 5 : 1; }  // a sparse table has taken 4 steps
  // Every third row and the last, or a fixed pattern on small tables.
  std::vector<float> touched() const {
    std::vector<float> marks(static_cast<std::size_t>(rows_));
    for (std::int64_t r = 0; r < rows_; ++r)
      marks[static_cast<std::size_t>(r)] = (r % 3 == 0 || r == rows_ - 1) ? 1.0f : 0.0f;
    return marks;
  }
  std::string name_;
  AdamParams p_;
  std::int64_t rows_, cols_;
  bool sparse_;
};

// The gradients' sum of squares for clipping: f64 sums on both backends in different orders,
// rounded once to f32, so they agree to an ulp of the result.
class SumSquares final : public OpCase {
 public:
  SumSquares(std::int64_t size, GradMode mode) : size_(size), mode_(mode) {}
  std::string op() const override { return "sum_squares"; }
  std::string params() const override { return std::to_string(size_) + "_" + mode_name(mode_); }
  OpKind kind() const override { return OpKind::kSumSquares; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    HostTensor out = f32_values("out", {1}, {mode_ == GradMode::kAccumulate ? 2.5f : 0.0f});
    out.role = mode_ == GradMode::kAccumulate ? Role::kInOut : Role::kOut;
    if (mode_ == GradMode::kOverwrite) out.data[0] = std::numeric_limits<float>::quiet_NaN();
    return {f32("x", {size_}, 331), out};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.sum_squares(t[0], t[1], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    double s = mode_ == GradMode::kAccumulate ? t[1].data[0] : 0.0;
    for (float v : t[0].data) s += static_cast<double>(v) * v;
    return {{1, {s}, kOneRounding}};
  }
  Tolerance against_cpu(const Precision&, std::size_t) const override { return kOneRounding; }
  bool repeatable() const override { return true; }

 private:
  // One rounding of an f64 sum to f32: half an ulp, and an ulp between two such roundings.
  static constexpr Tolerance kOneRounding{0, 2.4e-7};
  std::int64_t size_;
  GradMode mode_;
};

CaseList cases() {
  CaseList out;
  // One element, a part of one chunk, a chunk and a bit (65,536 per chunk on both backends),
  // and many chunks.
  for (std::int64_t size : {1, 1000, 65539, 1048579})
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<SumSquares>(size, m));
  for (const auto& [size, p] :
       std::vector<std::pair<std::int64_t, SgdParams>>{{1000, {0.1f, 0.9f, 1e-4f}},
                                                       {17, {0.01f, 0.0f, 0.0f}},
                                                       {64, {0.05f, 0.9f, 5e-4f}},
                                                       {33, {0.05f, 0.9f, 5e-4f, 1.0f / 1024}}})
    out.push_back(std::make_unique<SgdMomentum>(size, p, 2));
  // An odd size: the CUDA float4 loop and its tail.
  out.push_back(
      std::make_unique<SgdMomentum>(1000003, SgdParams{0.05f, 0.9f, 1e-4f, 1.0f / 256}, 3));
  for (const auto& [name, p] : std::vector<std::pair<std::string, AdamParams>>{
           {"adam", adam(1e-3f, 0, false)},
           {"adam_l2", adam(1e-2f, 0.05f, false)},
           {"adamw", adam(1e-2f, 0.05f, true)},
           {"adamw_scaled", adam(1e-3f, 0.01f, true, 1.0f / 1024)},
           // Clipped (a norm of 40 against 5), not clipped (against 50), and clipped after
           // grad_scale (40 x 4 against 5). Adam's step barely depends on the gradients' scale
           // (m / sqrt(v)), so these cases give the scale a say: an L2 term beside the
           // gradient, or an eps near the gradients' size.
           {"adam_l2_clipped", adam(1e-2f, 0.05f, false, 1.0f, 5.0f)},
           {"adam_l2_unclipped", adam(1e-2f, 0.05f, false, 1.0f, 50.0f)},
           {"adamw_scaled_clipped", with_epsilon(adam(1e-3f, 0.01f, true, 4.0f, 5.0f), 0.01f)}}) {
    out.push_back(std::make_unique<AdamCase>(name, p, 1, 257, false));
    out.push_back(
        std::make_unique<AdamCase>(name, p, 1, 100003, false));  // no vector width divides it
  }
  for (const auto& [name, p] : std::vector<std::pair<std::string, AdamParams>>{
           {"adamw", adam(1e-2f, 0.05f, true)},
           {"adam", adam(1e-2f, 0.05f, false)},
           {"adam_l2_clipped", adam(1e-2f, 0.05f, false, 1.0f, 5.0f)}}) {
    out.push_back(std::make_unique<AdamCase>(name, p, 9, 5, true));
    out.push_back(std::make_unique<AdamCase>(name, p, 1000, 48, true));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
