// Batch norm training (with the running-statistics update), inference and backward, plain and
// with the fused tails (ReLU, residual add + ReLU, the ReLU's bits from forward to backward),
// and folded into a convolution's weights and bias for inference:
// the CPU backend against the float64 reference, every other backend against the CPU in every
// float dtype and both gradient modes; and finite differences of the training forward.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "tests/ops/cases/batch_norm_inputs.h"
#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::BatchNormParams;
using backend::OpKind;
using namespace batch_norm_inputs;

// Rows are N*H*W of an NHWC activation: a ResNet-like [2, 4, 4, 8], odd sizes, a batch with
// few rows and many channels, and a large momentum so the running update is visible; plus
// ResNet-sized blocks (many rows: stage 3 at batch 256 with 256 channels, stage 1 at batch 64
// with 64) and channel counts that leave pack tails (3, 10).
const std::vector<BatchNormParams> kShapes = {bn(2 * 4 * 4, 8),
                                              bn(2 * 7 * 5, 13),
                                              bn(3, 64),
                                              bn(8 * 2 * 2, 3, 0.5f),
                                              bn(4 * 6 * 6, 32),
                                              bn(4 * 14 * 14, 64),
                                              bn(2 * 9 * 9, 24),
                                              bn(1000, 3),
                                              bn(37 * 5, 10),
                                              bn(4 * 7 * 7, 2048),
                                              bn(256 * 14 * 14, 256),
                                              bn(64 * 56 * 56, 64)};

class BnCase : public OpCase {
 public:
  BnCase(BatchNormParams p, OpKind kind, GradMode mode) : p_(p), kind_(kind), mode_(mode) {}
  std::string params() const override {
    return kind_ == OpKind::kBatchNormBackward ? name(p_) + "_" + mode_name(mode_) : name(p_);
  }
  OpKind kind() const override { return kind_; }
  backend::OpParams op_params(const Precision&) const override { return p_; }

 protected:
  // x, gamma, beta, running_mean, running_var, as the forward ops take them.
  std::vector<HostTensor> forward_inputs() const {
    return {bn_input(p_), channel_values("gamma", p_, 12, 0.5f, 1.5f),
            input("beta", {p_.channels}, 13, Kind::kF32),
            input("running_mean", {p_.channels}, 14, Kind::kF32),
            channel_values("running_var", p_, 15, 0.5f, 2.0f)};
  }
  BatchNormParams p_;
  OpKind kind_;
  GradMode mode_;
};

// --- the tail: y = relu(bn(x) [+ residual]), the ReLU's bits kept for backward -----------

// The residual a tail adds; a one-element placeholder (never read) without one.
HostTensor residual_input(const BatchNormParams& p) {
  if (!p.residual) return {"residual", {1}, Role::kScratch, Kind::kCompute, {0.0f}};
  return input("residual", {p.rows, p.channels}, 18);
}

// The float64 reference's pre-activation: y + residual (y itself without a residual).
Vec pre_activation(const BatchNormParams& p, Vec y, const HostTensor& residual) {
  if (p.residual)
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += residual.data[i];
  return y;
}

// And the tail's output: relu of that where the tail has a ReLU.
Vec apply_tail(const BatchNormParams& p, const Vec& y, const HostTensor& residual) {
  Vec out = pre_activation(p, y, residual);
  if (p.activation == backend::Activation::kRelu)
    for (double& v : out) v = std::max(v, 0.0);
  return out;
}

// x, gamma, beta, the running statistics (updated), the residual (read only with p.residual),
// y, the saved statistics, the ReLU mask (written with a ReLU tail; checked through
// BnTailBackward) and, with p.statistics, the sums of x it takes instead of summing x.
class BnTraining final : public BnCase {
 public:
  explicit BnTraining(BatchNormParams p)
      : BnCase(p, OpKind::kBatchNormTraining, GradMode::kOverwrite) {}
  std::string params() const override {
    return BnCase::params() + (p_.statistics ? "_statistics" : "");
  }
  std::string op() const override { return "batch_norm_forward_training"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = forward_inputs();
    t[3].role = t[4].role = Role::kInOut;
    t.push_back(residual_input(p_));
    t.push_back(output("y", {p_.rows, p_.channels}));
    t.push_back(output("saved_mean", {p_.channels}, Kind::kF32));
    t.push_back(output("saved_inv_std", {p_.channels}, Kind::kF32));
    t.push_back(mask_scratch(p_));
    if (p_.statistics) t.push_back(statistics_of(t[0]));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    const bool relu = p_.activation == backend::Activation::kRelu;
    be.batch_norm_forward_training(p_, t[0], t[1], t[2], t[6], t[7], t[8], t[3], t[4],
                                   p_.residual ? t[5] : Tensor(), relu ? t[9] : Tensor(),
                                   p_.statistics ? t[10] : Tensor());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::BatchNormTraining r =
        ref::batch_norm_forward_training(p_, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                         t[3].as_double(), t[4].as_double());
    const Tolerance tol = bn_tolerance(p_);
    return {{6, apply_tail(p_, r.y, t[5]), tol},
            {7, r.mean, tol},
            {8, r.inv_std, tol},
            {3, r.running_mean, tol},
            {4, r.running_var, tol}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    return bn_tolerance(prec, p_, tensor == 6);
  }
};

class BnInference final : public BnCase {
 public:
  explicit BnInference(BatchNormParams p)
      : BnCase(p, OpKind::kBatchNormInference, GradMode::kOverwrite) {}
  std::string op() const override { return "batch_norm_forward_inference"; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = forward_inputs();
    t.push_back(residual_input(p_));
    t.push_back(output("y", {p_.rows, p_.channels}));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.batch_norm_forward_inference(p_, t[0], t[1], t[2], t[3], t[4], t[6],
                                    p_.residual ? t[5] : Tensor());
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Vec y =
        ref::batch_norm_forward_inference(p_, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                          t[3].as_double(), t[4].as_double());
    return {{6, apply_tail(p_, y, t[5]), kElementwise}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return bn_tolerance(prec, p_, true);
  }
};

class BnBackward final : public BnCase {
 public:
  BnBackward(BatchNormParams p, GradMode mode) : BnCase(p, OpKind::kBatchNormBackward, mode) {}
  std::string op() const override { return "batch_norm_backward"; }
  // x, dy, gamma, the statistics forward training saved (rounded to f32), dx, dgamma, dbeta.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> in = forward_inputs();
    const ref::BatchNormTraining fwd =
        ref::batch_norm_forward_training(p_, in[0].as_double(), in[1].as_double(),
                                         in[2].as_double(), in[3].as_double(), in[4].as_double());
    HostTensor mean{"saved_mean",
                    {p_.channels},
                    Role::kIn,
                    Kind::kF32,
                    std::vector<float>(fwd.mean.begin(), fwd.mean.end())};
    HostTensor inv_std{"saved_inv_std",
                       {p_.channels},
                       Role::kIn,
                       Kind::kF32,
                       std::vector<float>(fwd.inv_std.begin(), fwd.inv_std.end())};
    return {in[0],
            input("dy", {p_.rows, p_.channels}, 16),
            in[1],
            mean,
            inv_std,
            grad_output("dx", {p_.rows, p_.channels}, mode_, 17),
            output("dgamma", {p_.channels}, Kind::kF32),
            output("dbeta", {p_.channels}, Kind::kF32)};
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.batch_norm_backward(p_, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::BatchNormGrads g =
        ref::batch_norm_backward(p_, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                 t[3].as_double(), t[4].as_double());
    return {{5, expected_grad(mode_, t[5], g.dx), {sum_tolerance(p_.rows).atol, 1e-4}},
            {6, g.dgamma, sum_tolerance(p_.rows)},
            {7, g.dbeta, sum_tolerance(p_.rows)}};
  }
  // dgamma and dbeta are sums over the rows of terms up to kNormalizedMagnitude.
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    if (tensor == 5 || prec.dtype == DType::kF32) return bn_tolerance(prec, p_, true);
    return bn_tolerance(prec, p_, false);
  }
};

// Forward training (for the mask and the statistics), then backward: dx, the residual's
// gradient (both in the case's mode), dgamma and dbeta, where only elements whose
// pre-activation was positive pass dy on.
class BnTailBackward final : public BnCase {
 public:
  // residual_grad false: a residual that needs no gradient (a graph input), no dresidual given.
  BnTailBackward(BatchNormParams p, GradMode mode, bool residual_grad = true)
      : BnCase(p, OpKind::kBatchNormBackward, mode), residual_grad_(p.residual && residual_grad) {}
  std::string op() const override { return "batch_norm_backward"; }
  std::string params() const override {
    const bool dropped = p_.residual && !residual_grad_;
    return name(p_) + "_" + mode_name(mode_) + (dropped ? "_no_dresidual" : "");
  }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = forward_inputs();
    t[3].role = t[4].role = Role::kScratch;
    const Shape data{p_.rows, p_.channels}, channel{p_.channels};
    t.push_back(residual_input(p_));
    t.push_back(input("dy", data, 16));
    t.push_back(output("y", data));
    t[7].role = Role::kScratch;
    t.push_back(output("saved_mean", channel, Kind::kF32));
    t.push_back(output("saved_inv_std", channel, Kind::kF32));
    t[8].role = t[9].role = Role::kScratch;
    t.push_back(mask_scratch(p_));
    t.push_back(grad_output("dx", data, mode_, 17));
    t.push_back(grad_output("dresidual", data, mode_, 19));
    if (!residual_grad_) t[12] = {"dresidual", {1}, Role::kScratch, Kind::kCompute, {0.0f}};
    t.push_back(output("dgamma", channel, Kind::kF32));
    t.push_back(output("dbeta", channel, Kind::kF32));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    const Tensor residual = p_.residual ? t[5] : Tensor(),
                 dresidual = residual_grad_ ? t[12] : Tensor();
    be.batch_norm_forward_training(p_, t[0], t[1], t[2], t[7], t[8], t[9], t[3], t[4], residual,
                                   t[10]);
    be.batch_norm_backward(p_, t[0], t[6], t[1], t[8], t[9], t[11], t[13], t[14], mode_, t[10],
                           dresidual, mode_);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const ref::BatchNormTraining f =
        ref::batch_norm_forward_training(p_, t[0].as_double(), t[1].as_double(), t[2].as_double(),
                                         t[3].as_double(), t[4].as_double());
    const Vec pre = pre_activation(p_, f.y, t[5]);
    Vec dz = t[6].as_double();
    for (std::size_t i = 0; i < dz.size(); ++i)
      if (!(pre[i] > 0)) dz[i] = 0;
    const ref::BatchNormGrads g =
        ref::batch_norm_backward(p_, t[0].as_double(), dz, t[1].as_double(), f.mean, f.inv_std);
    std::vector<Check> checks = {
        {11, expected_grad(mode_, t[11], g.dx), {sum_tolerance(p_.rows).atol, 1e-4}},
        {13, g.dgamma, sum_tolerance(p_.rows)},
        {14, g.dbeta, sum_tolerance(p_.rows)}};
    if (residual_grad_) checks.push_back({12, expected_grad(mode_, t[12], dz), kElementwise});
    return checks;
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    const bool per_element = tensor == 11 || tensor == 12;
    if (per_element || prec.dtype == DType::kF32) return bn_tolerance(prec, p_, true);
    return bn_tolerance(prec, p_, false);
  }

 private:
  bool residual_grad_;
};

// Inference's batch norm folded into the convolution before it: the weights [K, R, S, C] scaled
// per output channel and the bias shifted (Backend::batch_norm_fold).
class BnFold final : public BnCase {
 public:
  BnFold(BatchNormParams p, Shape w, bool bias)
      : BnCase(p, OpKind::kBatchNormFold, GradMode::kOverwrite), w_(std::move(w)), bias_(bias) {}
  std::string op() const override { return "batch_norm_fold"; }
  std::string params() const override {
    std::ostringstream o;
    o << "k" << w_[0] << "_" << w_[1] << "x" << w_[2] << "x" << w_[3]
      << (bias_ ? "_bias" : "_nobias");
    return o.str();
  }
  // w, bias (a one-element placeholder without one), gamma, beta, running_mean, running_var,
  // folded_w, folded_bias.
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {input("w", w_, 21)};
    t.push_back(bias_ ? input("bias", {p_.channels}, 22)
                      : HostTensor{"bias", {1}, Role::kScratch, Kind::kCompute, {0.0f}});
    std::vector<HostTensor> bn = forward_inputs();
    t.insert(t.end(), bn.begin() + 1, bn.end());
    t.push_back(output("folded_w", w_));
    t.push_back(output("folded_bias", {p_.channels}));
    return t;
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.batch_norm_fold(p_, t[0], bias_ ? t[1] : Tensor(), t[2], t[3], t[4], t[5], t[6], t[7]);
  }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const std::int64_t per_channel = w_.numel() / p_.channels;
    Vec w = t[0].as_double(), bias(static_cast<std::size_t>(p_.channels));
    for (std::int64_t c = 0; c < p_.channels; ++c) {
      const auto i = static_cast<std::size_t>(c);
      const double scale = t[2].data[i] / std::sqrt(double{t[5].data[i]} + p_.epsilon);
      for (std::int64_t j = c * per_channel; j < (c + 1) * per_channel; ++j)
        w[static_cast<std::size_t>(j)] *= scale;
      bias[i] = t[3].data[i] + ((bias_ ? t[1].data[i] : 0.0) - t[4].data[i]) * scale;
    }
    return {{6, w, kElementwise}, {7, bias, kElementwise}};
  }
  // One product (and for the bias one sum) per element, in f32, rounded once to the dtype;
  // scales reach 1.5 / sqrt(0.5) and biases a few units.
  Tolerance against_cpu(const Precision& prec, std::size_t) const override {
    return prec.dtype == DType::kF32 ? kElementwise : sum_tolerance(prec, 1, 8.0);
  }

 private:
  Shape w_;
  bool bias_;
};

BatchNormParams with_tail(BatchNormParams p, bool residual) {
  p.residual = residual;
  p.activation = backend::Activation::kRelu;
  return p;
}

// Small shapes only: an element whose pre-activation lies within rounding of zero may pass the
// ReLU on one side and not the other, and at these sizes none does. Channels come in multiples
// of 8 (the CUDA kernels' byte of mask per 8 channels); 24 leaves a tail of packs in a tile.
const std::vector<BatchNormParams> kTailShapes = {bn(2 * 4 * 4, 8), bn(3, 64), bn(2 * 9 * 9, 24),
                                                  bn(4 * 6 * 6, 32)};

CaseList cases() {
  CaseList out;
  for (const BatchNormParams& shape : kTailShapes) {
    for (bool residual : {false, true}) {
      const BatchNormParams p = with_tail(shape, residual);
      out.push_back(std::make_unique<BnTraining>(p));
      BatchNormParams with_statistics = p;
      with_statistics.statistics = true;
      out.push_back(std::make_unique<BnTraining>(with_statistics));
      out.push_back(std::make_unique<BnInference>(p));
      for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
        out.push_back(std::make_unique<BnTailBackward>(p, m));
    }
  }
  out.push_back(std::make_unique<BnTailBackward>(with_tail(kTailShapes[0], true),
                                                 GradMode::kOverwrite, false));
  // A 3x3 convolution's weights, a 1x1's with many output channels, an odd count.
  for (bool bias : {false, true}) {
    out.push_back(std::make_unique<BnFold>(bn(1, 8), Shape{8, 3, 3, 4}, bias));
    out.push_back(std::make_unique<BnFold>(bn(1, 256), Shape{256, 1, 1, 64}, bias));
    out.push_back(std::make_unique<BnFold>(bn(1, 13), Shape{13, 1, 1, 5}, bias));
  }
  // ResNet-50's stage-1 output, 56x56x256 at kPerfBatch: memory-bound.
  const BatchNormParams stage1 = bn(kPerfBatch * 56 * 56, 256);
  out.push_back(std::make_unique<PerfCase>(std::make_unique<BnTraining>(stage1)));
  out.push_back(
      std::make_unique<PerfCase>(std::make_unique<BnBackward>(stage1, GradMode::kOverwrite)));
  for (const BatchNormParams& p : kShapes) {
    out.push_back(std::make_unique<BnTraining>(p));
    BatchNormParams with_statistics = p;
    with_statistics.statistics = true;
    out.push_back(std::make_unique<BnTraining>(with_statistics));
    out.push_back(std::make_unique<BnInference>(p));
    for (GradMode m : {GradMode::kOverwrite, GradMode::kAccumulate})
      out.push_back(std::make_unique<BnBackward>(p, m));
  }
  return out;
}
DLBENCH_OP_CASES(cases);

// dx, dgamma and dbeta through the training forward (batch statistics).
std::vector<GradCase> grad_cases() {
  const BatchNormParams p = bn(6, 3);
  const Shape data{p.rows, p.channels}, channel{p.channels};
  GradCase g;
  g.op = "batch_norm_training";
  g.params = name(p);
  g.kind = OpKind::kBatchNormBackward;
  g.op_params = p;
  g.tensors = {input("x", data, 91),
               {"gamma", channel, Role::kIn, Kind::kF32, positive_values(3, 92, 0.5f, 1.5f)},
               input("beta", channel, 93, Kind::kF32),
               input("dy", data, 94),
               input("running_mean", channel, 95, Kind::kF32),
               {"running_var", channel, Role::kIn, Kind::kF32, positive_values(3, 96, 1, 2)},
               output("y", data),
               output("saved_mean", channel, Kind::kF32),
               output("saved_inv_std", channel, Kind::kF32),
               output("dx", data),
               output("dgamma", channel, Kind::kF32),
               output("dbeta", channel, Kind::kF32)};
  g.wrt = {{0, 9}, {1, 10}, {2, 11}};
  g.weight = 3;
  g.forward = [p](const std::vector<Vec>& t) {
    return ref::batch_norm_forward_training(p, t[0], t[1], t[2], t[4], t[5]).y;
  };
  g.reference_backward = [p](const std::vector<Vec>& t) {
    const ref::BatchNormTraining f =
        ref::batch_norm_forward_training(p, t[0], t[1], t[2], t[4], t[5]);
    ref::BatchNormGrads r = ref::batch_norm_backward(p, t[0], t[3], t[1], f.mean, f.inv_std);
    return std::vector<Vec>{r.dx, r.dgamma, r.dbeta};
  };
  g.backward = [p](backend::Backend& be, std::span<const Tensor> t) {
    be.batch_norm_forward_training(p, t[0], t[1], t[2], t[6], t[7], t[8], t[4], t[5]);
    be.batch_norm_backward(p, t[0], t[3], t[1], t[7], t[8], t[9], t[10], t[11],
                           GradMode::kOverwrite);
  };
  return {std::move(g)};
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness
