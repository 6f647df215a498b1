// Batch norm with a normalized residual (BatchNormParams::residual_norm): the downsampling tail
// y = relu(bn(x) + bn'(r)) in one op, forward training (with and without the sums handed over)
// and backward (dx, the residual's gradient through bn' in both gradient modes or not at all,
// and both batch norms' dgamma and dbeta): the CPU against the float64 reference composed of two
// plain batch norms, every other backend against the CPU.
#include <algorithm>

#include "tests/ops/cases/batch_norm_inputs.h"
#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::BatchNormParams;
using backend::OpKind;
using namespace batch_norm_inputs;

BatchNormParams dual(std::int64_t rows, std::int64_t channels) {
  BatchNormParams p = bn(rows, channels);
  p.residual = p.residual_norm = true;
  p.activation = backend::Activation::kRelu;
  return p;
}

// x's batch norm's inputs, then r's: x, gamma, beta, running_mean, running_var (0-4) and r,
// gamma', beta', running_mean', running_var' (5-9). r has its own values and scales.
std::vector<HostTensor> dual_inputs(const BatchNormParams& p, Role running) {
  std::vector<HostTensor> t = {bn_input(p),
                               channel_values("gamma", p, 12, 0.5f, 1.5f),
                               input("beta", {p.channels}, 13, Kind::kF32),
                               input("running_mean", {p.channels}, 14, Kind::kF32),
                               channel_values("running_var", p, 15, 0.5f, 2.0f),
                               bn_input(p, "residual", 18),
                               channel_values("residual_gamma", p, 22, 0.5f, 1.5f),
                               input("residual_beta", {p.channels}, 23, Kind::kF32),
                               input("residual_running_mean", {p.channels}, 24, Kind::kF32),
                               channel_values("residual_running_var", p, 25, 0.5f, 2.0f)};
  for (std::size_t i : {3, 4, 8, 9}) t[i].role = running;
  return t;
}

// Both batch norms' forward in float64, and the tail's pre-activation bn(x) + bn'(r).
struct DualForward {
  ref::BatchNormTraining x, r;
  Vec pre;
};

DualForward dual_forward(const BatchNormParams& p, const std::vector<HostTensor>& t) {
  DualForward f{
      ref::batch_norm_forward_training(p, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                       t[3].as_double(), t[4].as_double()),
      ref::batch_norm_forward_training(p, t[5].as_double(), t[6].as_double(), t[7].as_double(),
                                       t[8].as_double(), t[9].as_double()),
      {}};
  f.pre = f.x.y;
  for (std::size_t i = 0; i < f.pre.size(); ++i) f.pre[i] += f.r.y[i];
  return f;
}

// The rest of forward training's tensors: y (10), the saved statistics of x and r (11-14), the
// mask (15) and, with the sums handed over, x's and r's (16, 17).
void add_forward_outputs(const BatchNormParams& p, std::vector<HostTensor>& t) {
  t.push_back(output("y", {p.rows, p.channels}));
  for (const char* name :
       {"saved_mean", "saved_inv_std", "residual_saved_mean", "residual_saved_inv_std"})
    t.push_back(output(name, {p.channels}, Kind::kF32));
  t.push_back(mask_scratch(p));
  if (p.statistics) {
    t.push_back(statistics_of(t[0]));
    t.push_back(statistics_of(t[5], "residual_statistics"));
  }
}

void run_forward(backend::Backend& be, const BatchNormParams& p, std::span<const Tensor> t) {
  backend::ResidualNorm rn;
  rn.gamma = t[6], rn.beta = t[7], rn.running_mean = t[8], rn.running_var = t[9];
  rn.saved_mean = t[13], rn.saved_inv_std = t[14];
  if (p.statistics) rn.statistics = t[17];
  be.batch_norm_forward_training(p, t[0], t[1], t[2], t[10], t[11], t[12], t[3], t[4], t[5], t[15],
                                 p.statistics ? t[16] : Tensor(), rn);
}

class DualCase : public OpCase {
 public:
  DualCase(BatchNormParams p, OpKind kind) : p_(p), kind_(kind) {}
  OpKind kind() const override { return kind_; }
  backend::OpParams op_params(const Precision&) const override { return p_; }

 protected:
  BatchNormParams p_;
  OpKind kind_;
};

class DualTraining final : public DualCase {
 public:
  explicit DualTraining(BatchNormParams p) : DualCase(p, OpKind::kBatchNormTraining) {}
  std::string op() const override { return "batch_norm_forward_training"; }
  std::string params() const override {
    return name(p_) + "_normalized_residual" + (p_.statistics ? "_statistics" : "");
  }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = dual_inputs(p_, Role::kInOut);
    add_forward_outputs(p_, t);
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    run_forward(be, p_, t);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const DualForward f = dual_forward(p_, t);
    Vec y = f.pre;
    for (double& v : y) v = std::max(v, 0.0);
    const Tolerance tol = bn_tolerance(p_);
    return {{10, y, tol},
            {11, f.x.mean, tol},
            {12, f.x.inv_std, tol},
            {13, f.r.mean, tol},
            {14, f.r.inv_std, tol},
            {3, f.x.running_mean, tol},
            {4, f.x.running_var, tol},
            {8, f.r.running_mean, tol},
            {9, f.r.running_var, tol}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return bn_tolerance(prec, p_, tensor == 10);
  }
};

// Forward training (for the mask and both batch norms' statistics), then backward: dx (17), the
// residual's gradient (18), dgamma and dbeta (19, 20) and the residual batch norm's (21, 22),
// from dy (16) where the pre-activation was positive.
class DualBackward final : public DualCase {
 public:
  // residual_grad false: a residual that needs no gradient; its batch norm's still gets one.
  DualBackward(BatchNormParams p, GradMode mode, bool residual_grad = true)
      : DualCase(p, OpKind::kBatchNormBackward), mode_(mode), residual_grad_(residual_grad) {}
  std::string op() const override { return "batch_norm_backward"; }
  std::string params() const override {
    return name(p_) + "_normalized_residual_" + mode_name(mode_) +
           (residual_grad_ ? "" : "_no_dresidual");
  }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = dual_inputs(p_, Role::kScratch);
    add_forward_outputs(p_, t);
    for (std::size_t i = 10; i <= 14; ++i) t[i].role = Role::kScratch;
    const Shape data{p_.rows, p_.channels}, channel{p_.channels};
    t.push_back(input("dy", data, 16));
    t.push_back(grad_output("dx", data, mode_, 17));
    t.push_back(residual_grad_
                    ? grad_output("dresidual", data, mode_, 19)
                    : HostTensor{"dresidual", {1}, Role::kScratch, Kind::kCompute, {0.0f}});
    for (const char* name : {"dgamma", "dbeta", "residual_dgamma", "residual_dbeta"})
      t.push_back(output(name, channel, Kind::kF32));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    run_forward(be, p_, t);
    backend::ResidualNorm rn;
    rn.gamma = t[6], rn.saved_mean = t[13], rn.saved_inv_std = t[14];
    rn.dgamma = t[21], rn.dbeta = t[22];
    be.batch_norm_backward(p_, t[0], t[16], t[1], t[11], t[12], t[17], t[19], t[20], mode_, t[15],
                           residual_grad_ ? t[18] : Tensor(), mode_, t[5], rn);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const DualForward f = dual_forward(p_, t);
    Vec dz = t[16].as_double();
    for (std::size_t i = 0; i < dz.size(); ++i)
      if (!(f.pre[i] > 0)) dz[i] = 0;
    const ref::BatchNormGrads gx =
        ref::batch_norm_backward(p_, t[0].as_double(), dz, t[1].as_double(), f.x.mean, f.x.inv_std);
    const ref::BatchNormGrads gr =
        ref::batch_norm_backward(p_, t[5].as_double(), dz, t[6].as_double(), f.r.mean, f.r.inv_std);
    const Tolerance per_element{sum_tolerance(p_.rows).atol, 1e-4};
    std::vector<Check> checks = {{17, expected_grad(mode_, t[17], gx.dx), per_element},
                                 {19, gx.dgamma, sum_tolerance(p_.rows)},
                                 {20, gx.dbeta, sum_tolerance(p_.rows)},
                                 {21, gr.dgamma, sum_tolerance(p_.rows)},
                                 {22, gr.dbeta, sum_tolerance(p_.rows)}};
    if (residual_grad_) checks.push_back({18, expected_grad(mode_, t[18], gr.dx), per_element});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    const bool per_element = tensor == 17 || tensor == 18;
    if (per_element || prec.dtype == DType::kF32) return bn_tolerance(prec, p_, true);
    return bn_tolerance(prec, p_, false);
  }

 private:
  GradMode mode_;
  bool residual_grad_;
};

CaseList cases() {
  CaseList out;
  // Small shapes, as for the other tails (no pre-activation within rounding of the ReLU's kink),
  // channels in multiples of 8 (the CUDA kernels' byte of mask); 24 leaves a tail of packs.
  for (const BatchNormParams& p : {dual(2 * 4 * 4, 8), dual(3, 64), dual(2 * 9 * 9, 24)}) {
    out.push_back(std::make_unique<DualTraining>(p));
    // Handed-over sums give the variance as E[x^2] - mean^2, which loses digits where a channel's
    // spread is small against its mean: over 3 rows one of r's channels is (inv_std 28).
    BatchNormParams with_statistics = p;
    with_statistics.statistics = true;
    if (p.rows > 3) out.push_back(std::make_unique<DualTraining>(with_statistics));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<DualBackward>(p, m));
  }
  out.push_back(std::make_unique<DualBackward>(dual(2 * 4 * 4, 8), GradMode::kOverwrite, false));
  return out;
}
DLBENCH_OP_CASES(cases);

}  // namespace
}  // namespace dlbench::op_harness
